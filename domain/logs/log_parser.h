// parse_log's domain: reads a training log (or TensorBoard event files) once, streaming,
// and returns per-metric series with the precision they were printed at, the step
// coverage, the success marker and every error line found. Memory grows with the series,
// not with the log. Problems with the input are either an error Status (missing, empty,
// binary) or a warning in the result; never a silent zero.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "domain/logs/log_result.h"
#include "support/status.h"

namespace parity::logs {

// Parses one file (or, for TensorBoard, a file or a directory of event files).
Result<ParseResult> ParseLog(const std::filesystem::path& path, const ParseOptions& options);

// Expands paths with '*' / '?' / '[...]' in their last component (per-rank files) into the
// matching files, sorted; a path without wildcards is kept as is. Error when a pattern
// matches nothing.
Result<std::vector<std::filesystem::path>> ExpandLogPaths(const std::vector<std::string>& patterns);

}  // namespace parity::logs
