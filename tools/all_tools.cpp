#include "tools/all_tools.h"

#include "tools/audit_workspace/audit_workspace.h"
#include "tools/compare_logs/compare_logs.h"
#include "tools/hunt/hunt.h"
#include "tools/inject_prints/inject_prints.h"
#include "tools/msprobe_first_diff/msprobe_first_diff.h"
#include "tools/parse_log/parse_log.h"
#include "tools/parse_log/series_resource.h"
#include "tools/premerge/premerge.h"
#include "tools/probe_env/probe_env.h"
#include "tools/render_report/render_report.h"
#include "tools/run_training/run_training.h"

namespace parity::tools {

// Each tool folder declares its factory in its own header; add one line per tool here.
std::vector<mcp::Tool> AllTools() {
  std::vector<mcp::Tool> tools;
  tools.push_back(MakeAuditWorkspaceTool());
  tools.push_back(MakeProbeEnvTool());
  tools.push_back(MakeRunTrainingTool());
  tools.push_back(MakeParseLogTool());
  tools.push_back(MakeCompareLogsTool());
  tools.push_back(MakeMsprobeFirstDiffTool());
  tools.push_back(MakeInjectPrintsTool());
  tools.push_back(MakeRenderReportTool());
  tools.push_back(MakePremergeTool());
  tools.push_back(MakeHuntTool());
  return tools;
}

std::vector<mcp::ResourceTemplate> AllResourceTemplates() { return {MakeSeriesResourceTemplate()}; }

}  // namespace parity::tools
