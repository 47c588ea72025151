#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json RunTrainingInputSchema();
nlohmann::json RunTrainingOutputSchema();

}  // namespace parity::tools
