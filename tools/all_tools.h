// The one list of parity's MCP tools, in the order tools/list shows them.
#pragma once

#include <vector>

#include "mcp-server/registry.h"
#include "mcp-server/tool.h"

namespace parity::tools {

std::vector<mcp::Tool> AllTools();

// The resource templates the tools' results link to (parse_log's series pages).
std::vector<mcp::ResourceTemplate> AllResourceTemplates();

}  // namespace parity::tools
