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

// Expands what a user passes as "a log" into the files read: a pattern with '*' / '?' /
// '[...]' in any component (glob(3): "runs/*/rank_[01].log"), sorted, at most kMaxLogPaths;
// a folder of text logs into the training logs directly in it (*.log, *.txt, *.out, *.err,
// *.jsonl, each also .gz/.xz/.zst), sorted; a folder holding TensorBoard event files (4
// levels deep) stays one path (read as TensorBoard). A plain path is kept as is. Errors
// name the pattern or folder that gave nothing.
inline constexpr size_t kMaxLogPaths = 4096;
Result<std::vector<std::filesystem::path>> ExpandLogPaths(const std::vector<std::string>& patterns);

}  // namespace parity::logs
