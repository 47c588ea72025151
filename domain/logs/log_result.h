// The results of reading a training log (text or TensorBoard events), shared by the two
// readers (text_log_parser, tfevents) and by everything that consumes them (compare,
// result_json, the tools). Plain data; the readers fill it, nobody else writes it.
#pragma once

#include <cstdint>
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

enum class LogFormat {
  kAuto,
  kTorchtitan,
  kTorchtitanNpu,
  kMegatron,
  kDeepSpeed,
  kHfTrainer,
  kJsonl,  // a metrics file the trainer writes itself: one JSON object per step, values in full
  kTensorBoard
};

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
  // Constant at every step while the same metric varies on another rank: a stand-in
  // value (torchtitan's non-last pipeline stages print loss -1.0), not a measurement.
  bool placeholder = false;
  int64_t not_available = 0;  // logged steps that printed N/A for it ("mfu: N/A")
};

// The metrics of one more rank of the same log (interleaved "[rankN]:" lines).
struct RankMetrics {
  int rank = 0;
  std::vector<MetricResult> metrics;
  const MetricResult* Find(const std::string& name) const;
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

// One file of a run read from several (a folder of per-rank logs: rank_files.h).
struct LogSource {
  std::string path;
  std::string sha256;     // empty unless asked for
  uint64_t bytes = 0;
  std::vector<int> ranks;  // the ranks whose metrics it holds (empty: none)
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
  // Every other rank that printed metric lines, with the same metrics (compare_logs
  // compares them all; the verdict is the worst).
  std::vector<RankMetrics> other_ranks;
  // The step of every metric line of `rank`, sorted, values or not (a Megatron iteration
  // skipped for a loss-scale overflow prints no loss but exists). Coverage reads it.
  std::vector<int64_t> logged_steps;
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
  // The files this result was merged from (MergeRankLogs); empty for one file.
  std::vector<LogSource> sources;

  const MetricResult* Find(const std::string& name) const;
};

}  // namespace parity::logs
