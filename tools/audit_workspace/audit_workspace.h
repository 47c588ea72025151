// MCP tool audit_workspace: skill step 0 and step 8 over libgit2 (domain/git). One tool
// with an `action`: audit (read-only), diff (A/B/C proposal), prepare (the user confirms
// the classes through elicitation, then worktrees + infra copy + tarball), cleanup.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeAuditWorkspaceTool();

}  // namespace parity::tools
