#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json ProbeEnvInputSchema();
nlohmann::json ProbeEnvOutputSchema();

}  // namespace parity::tools
