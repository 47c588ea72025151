// inject_prints: probe prints in a parity worktree (domain/inject): analyze, inject,
// revert (byte for byte), status. Targets are file+line, a function, or the user frames of
// msprobe_first_diff's hunt.json. Analysis is Python's ast on the training interpreter;
// the DeepSeek and MCP-sampling analysers are not implemented yet and are refused clearly.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeInjectPrintsTool();

}  // namespace parity::tools
