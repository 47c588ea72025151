// inject_prints: probe prints in a parity worktree (domain/inject): analyze, inject,
// revert (byte for byte), status. Targets are file+line, a function, or the user frames of
// msprobe_first_diff's hunt.json. The values to probe are chosen by DeepSeek (any
// OpenAI-compatible endpoint), the client's model through MCP sampling, or Python's ast
// (argument "analyser": auto | deepseek | sampling | ast); the result says which decided.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeInjectPrintsTool();

}  // namespace parity::tools
