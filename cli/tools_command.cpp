#include <cstdio>

#include "cli/commands.h"
#include "mcp-server/registry.h"
#include "tools/all_tools.h"

namespace parity::cli {

int ToolsCommand(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "parity tools: takes no arguments\n");
    return kExitUsage;
  }
  mcp::json tools = mcp::json::array();
  for (const auto& tool : tools::AllTools()) tools.push_back(mcp::ToolToJson(tool.spec));
  std::printf("%s\n", mcp::json{{"tools", tools}}.dump(2).c_str());
  return kExitOk;
}

}  // namespace parity::cli
