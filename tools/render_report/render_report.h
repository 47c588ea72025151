// The render_report tool: the evidence report (HTML, PDF, PNG charts, CSV, reproduce.json)
// from a report directory, and optionally the mail. A thin adapter over
// domain/report/render.h.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeRenderReportTool();

}  // namespace parity::tools
