// parse_log: metrics per step from training logs and TensorBoard event files, with the
// precision they were printed at, step coverage, success marker, errors and warnings.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeParseLogTool();

}  // namespace parity::tools
