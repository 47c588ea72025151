// compare_logs: baseline vs candidate per metric, a verdict PASS / FAIL / INCONCLUSIVE, and
// <report_dir>/<case>/report.json + diff_summary.csv, recorded in the ledger.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeCompareLogsTool();

}  // namespace parity::tools
