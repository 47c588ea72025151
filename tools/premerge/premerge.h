// MCP tool premerge: the premerge-accuracy-check skill as one call, the pipeline `parity
// premerge` runs (domain/workflow/premerge.h), for a client that would rather start the
// whole check than drive the eight tools step by step. Minutes to hours of training, so it
// may run as a task (the 2026-07-28 tasks extension, or the legacy tasks utility): poll
// it, fetch its result, cancel it (its trainings get SIGTERM). The config file names what
// runs, and the caller chose the file: every step is judged by the user's policy as if the
// caller had made it (tools/pipeline_tool.h).
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakePremergeTool();

}  // namespace parity::tools
