// The one list of parity's MCP tools, in the order tools/list shows them.
#pragma once

#include <vector>

#include "mcp-server/tool.h"

namespace parity::tools {

std::vector<mcp::Tool> AllTools();

}  // namespace parity::tools
