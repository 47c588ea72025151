// MCP tool run_training: skill steps 3-4. Starts a training (the initial-checkpoint run or a
// baseline/candidate run loading it) in a worktree, locally or over SSH, as a detached job,
// and follows it (progress from the log), or returns its id at once; status, wait, cancel
// and list act on jobs by id, also jobs started by another parity process. A run that
// failed is an isError result carrying the job and its evidence.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeRunTrainingTool();

}  // namespace parity::tools
