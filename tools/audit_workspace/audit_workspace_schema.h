// The JSON Schemas of audit_workspace's arguments and structured result.
#pragma once

#include <nlohmann/json.hpp>

namespace parity::tools {

nlohmann::json AuditWorkspaceInputSchema();
nlohmann::json AuditWorkspaceOutputSchema();

}  // namespace parity::tools
