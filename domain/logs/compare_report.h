// compare_logs' domain: two parsed runs against criteria, a verdict with its reason, and
// the files render_report reads: <report_dir>/<case>/report.json (docs/CONTRACTS.md §3) and
// diff_summary.csv (one row per step).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/logs/compare.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"
#include "domain/logs/probe_compare.h"
#include "support/status.h"

namespace parity::logs {

struct RunComparison {
  Verdict verdict = Verdict::kPass;
  std::string reason;
  std::optional<std::string> preset;
  bool bitwise = false;
  bool common_steps_only = false;
  std::vector<MetricComparison> metrics;
  std::vector<std::string> notes;  // log errors, missing success markers, dropped steps
  // inject_prints' probes, when either log has PARITY_PROBE lines: evidence beside the
  // metrics' verdict, which they do not change.
  std::optional<ProbeComparison> probes;
};

// Errors: a metric missing on one side (names the side, its path and what it has), steps
// that differ (CompareSeries). When either log has probes, a metric missing on both sides
// is skipped with a note (a short instrumented run may print no metrics); with no metric
// left the verdict is INCONCLUSIVE and the probes are the evidence.
Result<RunComparison> CompareRuns(const ParseResult& baseline, const ParseResult& candidate,
                                  const Criteria& criteria, std::optional<std::string> preset,
                                  bool common_steps_only);

// report.json's content.
nlohmann::json CompareReportJson(const std::string& case_name, const ParseResult& baseline,
                                 const ParseResult& candidate, const RunComparison& comparison);

// Writes <dir>/report.json and <dir>/diff_summary.csv (creating dir), each atomically.
Status WriteCompareReport(const std::filesystem::path& dir, const nlohmann::json& report,
                          const RunComparison& comparison);

// A case name safe as one directory name: [A-Za-z0-9._-], not "." or "..".
Status ValidateCaseName(const std::string& name);

}  // namespace parity::logs
