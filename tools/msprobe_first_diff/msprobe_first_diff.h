// msprobe_first_diff: the first divergent API between a baseline and a candidate msprobe
// dump (or in an msprobe compare result), whether its inputs already differed, its stack,
// the first user frame, the local source line and the git hunk that changed it. Writes
// <report_dir>/hunt/hunt.json (and hunt/compare_table.csv when asked: compare_table) and
// records itself in the ledger.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeMsprobeFirstDiffTool();

}  // namespace parity::tools
