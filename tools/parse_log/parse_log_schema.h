// parse_log's input and output JSON schemas.
#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json ParseLogInputSchema();
nlohmann::json ParseLogOutputSchema();
// One parsed file, as in parse_log's output (compare_logs reuses it for its inputs).
nlohmann::json ParsedFileSchema();

}  // namespace parity::tools
