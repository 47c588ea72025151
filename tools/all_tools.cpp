#include "tools/all_tools.h"

namespace parity::tools {

// Each tool folder declares its factory in its own header; add one line per tool here.
std::vector<mcp::Tool> AllTools() {
  std::vector<mcp::Tool> tools;
  return tools;
}

}  // namespace parity::tools
