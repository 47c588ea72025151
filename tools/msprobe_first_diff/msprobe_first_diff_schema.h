#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json MsprobeFirstDiffInputSchema();
nlohmann::json MsprobeFirstDiffOutputSchema();

}  // namespace parity::tools
