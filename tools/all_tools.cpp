#include "tools/all_tools.h"

#include "tools/probe_env/probe_env.h"
#include "tools/run_training/run_training.h"

namespace parity::tools {

// Each tool folder declares its factory in its own header; add one line per tool here.
std::vector<mcp::Tool> AllTools() {
  std::vector<mcp::Tool> tools;
  tools.push_back(MakeProbeEnvTool());
  tools.push_back(MakeRunTrainingTool());
  return tools;
}

}  // namespace parity::tools
