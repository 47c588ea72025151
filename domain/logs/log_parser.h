// parse_log's domain: reads a training log (or TensorBoard event files) once, streaming,
// and returns per-metric series with the precision they were printed at, the step
// coverage, the success marker and every error line found. Memory grows with the series,
// not with the log. Problems with the input are either an error Status (missing, empty,
// binary) or a warning in the result; never a silent zero.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/logs/probe_line.h"
#include "domain/logs/series.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::logs {

enum class LogFormat { kAuto, kTorchtitan, kTorchtitanNpu, kMegatron, kDeepSpeed, kHfTrainer, kTensorBoard };

const char* FormatName(LogFormat format);
// Accepts the names FormatName returns plus "mindspeed" and "pangu" (Megatron lines).
Result<LogFormat> FormatFromName(const std::string& name);
// Every accepted name, for schemas and messages.
const std::vector<std::string>& FormatNames();

struct ParseOptions {
  LogFormat format = LogFormat::kAuto;
  // Metric names wanted; "*" keeps every metric found.
  std::vector<std::string> metrics = {"loss", "grad_norm"};
  // Custom keywords (PrecisionComparer's log_keywords): each becomes a metric of that name,
  // read as "<keyword>[:=] <number>" on any line of the chosen rank.
  std::vector<std::string> keywords;
  // A regex (ECMAScript, named groups (?<name>...) or (?P<name>...)): each named group but
  // "step" is a metric. Slower: every line of the chosen rank is tried.
  std::string regex;
  // Lines of this torchrun rank ("[rank3]:" / "[default3]:") plus unprefixed lines.
  // nullopt: rank 0, or if rank 0 printed no metrics, the first other rank that did.
  std::optional<int> rank;
  std::vector<std::string> success_markers = {"training success", "Training completed"};
  // The last step the run should reach; Megatron logs state it themselves.
  std::optional<int64_t> expected_steps;
  bool sha256 = false;
  size_t max_errors = 200;        // error lines kept in full (all are counted)
  CancellationToken cancel;
  std::function<void(uint64_t done_bytes, uint64_t total_bytes)> progress;
};

struct LogError {
  int64_t line = 0;
  std::string kind;  // traceback, exception, error_log, npu_oom, cuda_oom, torch_npu_error, ...
  std::string text;
  std::optional<int> rank;
};

struct ParseWarning {
  std::string code;     // truncated_last_line, binary_bytes, duplicate_steps, restart, ...
  std::string message;
  std::optional<int64_t> line;
};

struct MetricResult {
  std::string name;
  std::string source;   // "log" or "tensorboard:<tag>"
  KeyedSeries series;   // in step order, duplicates resolved
  PrecisionSummary precision;
  NonFinite non_finite;
  SeriesIssues issues;
};

struct StepCoverage {
  int64_t seen = 0;
  std::optional<int64_t> first, last;
  std::optional<int64_t> interval;      // the usual distance between logged steps
  std::optional<int64_t> expected_last; // from the options or the log itself
  std::optional<int64_t> expected_count;
  int64_t missing_count = 0;
  std::vector<int64_t> missing;         // the first 100 missing steps
  int64_t duplicates = 0;
  int64_t restarts = 0;
};

struct ParseResult {
  std::string path;
  std::string sha256;  // empty unless asked for
  uint64_t bytes = 0;
  int64_t lines = 0;
  LogFormat format = LogFormat::kAuto;
  bool text_log = true;             // false for TensorBoard events (no markers, no error lines)
  std::string format_detail;        // e.g. "loss printed %8.5f (torchtitan >= v0.2.2)"
  std::optional<int> rank;          // the rank whose lines were read (nullopt: unprefixed)
  std::vector<int> ranks_seen;      // every rank prefix met on metric lines
  std::vector<MetricResult> metrics;          // requested (or all) metrics that were found
  std::vector<std::string> available_metrics; // everything the log carries
  StepCoverage steps;
  bool success_marker = false;
  std::optional<int64_t> success_line;
  std::string success_text;
  std::vector<LogError> errors;
  int64_t errors_total = 0;
  std::map<std::string, int64_t> error_counts;
  std::vector<ParseWarning> warnings;
  // inject_prints' PARITY_PROBE lines, found in the same pass (every rank's).
  ProbeLog probes;

  const MetricResult* Find(const std::string& name) const;
};

// Parses one file (or, for TensorBoard, a file or a directory of event files).
Result<ParseResult> ParseLog(const std::filesystem::path& path, const ParseOptions& options);

// Fills result.steps from the loss series (or the first metric): range, logging interval,
// gaps against `total_steps` or options.expected_steps, duplicates; adds the warnings.
// Shared by the text and the TensorBoard readers.
void FillCoverage(ParseResult& result, const ParseOptions& options, std::optional<int64_t> total_steps,
                  std::vector<ParseWarning>& warnings);

// Expands paths with '*' / '?' / '[...]' in their last component (per-rank files) into the
// matching files, sorted; a path without wildcards is kept as is. Error when a pattern
// matches nothing.
Result<std::vector<std::filesystem::path>> ExpandLogPaths(const std::vector<std::string>& patterns);

}  // namespace parity::logs
