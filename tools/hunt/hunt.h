// MCP tool hunt: PrecisionComparer's root-cause loop as one call, the pipeline `parity hunt`
// runs (domain/workflow/hunt.h): both sides trained with msprobe dumps, the first divergent
// API, prints injected around it, retrained, until the operator, source line and git hunk
// are located or the evidence runs out. Long, so it may run as a task (like premerge). The
// config names what runs and the caller chose it: every step is judged by the user's
// policy as if the caller had made it (tools/pipeline_tool.h); a literal SSH password in
// the file is refused (a secret comes from the user: password_env and the policy's host).
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeHuntTool();

}  // namespace parity::tools
