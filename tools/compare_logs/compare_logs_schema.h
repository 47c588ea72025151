// compare_logs' input and output JSON schemas.
#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json CompareLogsInputSchema();
nlohmann::json CompareLogsOutputSchema();

}  // namespace parity::tools
