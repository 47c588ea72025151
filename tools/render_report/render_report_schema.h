#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json RenderReportInputSchema();
nlohmann::json RenderReportOutputSchema();

}  // namespace parity::tools
