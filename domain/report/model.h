// What a report says, read from the report directory (docs/CONTRACTS.md): each case's
// compare_logs report.json and diff_summary.csv, the ledger manifest.json, an optional
// hunt/hunt.json, and the infra tarball's file list. Every renderer reads only this model.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::report {

using json = nlohmann::json;

enum class Language { kZh, kEn };

// One metric of one case: the compare statistics and the per-step series from the CSV.
struct MetricData {
  std::string name;
  json stats;  // report.json metrics.<name>
  std::vector<double> steps, baseline, candidate, abs_diff, rel_diff;
  std::optional<double> tolerance_abs;
  std::vector<double> envelope;  // calibrated comparisons: <metric>_noise_envelope per step
};

struct CaseData {
  std::string name;
  std::filesystem::path report_path;  // <case>/report.json
  std::filesystem::path csv_path;     // <case>/diff_summary.csv
  json report;                        // report.json as written by compare_logs
  std::vector<MetricData> metrics;    // in report.json order
  std::vector<std::string> csv_header;
  std::vector<std::vector<std::string>> csv_rows;
  // Gate 1 of `parity premerge`: <case>.gate1/report.json (the baseline against its own
  // repeat, bitwise), when the report directory holds one; null otherwise.
  json gate1;
};

struct LogFile {
  std::string label;               // "baseline toy_small"
  std::filesystem::path path;      // absolute
};

struct ReportModel {
  std::string title;
  Language language = Language::kZh;
  std::filesystem::path report_dir;
  std::vector<CaseData> cases;
  json manifest;              // null when the directory has no ledger
  std::optional<json> hunt;   // hunt/hunt.json
  std::filesystem::path infra_tarball;        // empty when absent
  std::vector<std::string> infra_files;       // the tarball's member files
  std::vector<LogFile> logs;                  // every training log the cases and ledger name
};

struct LoadOptions {
  std::filesystem::path report_dir;
  std::vector<std::string> cases;  // empty: every <case>/report.json under report_dir (a
                                   // <case>.gate1 is attached to its case, not one of its own)
  std::string title;
  Language language = Language::kZh;
};

Result<ReportModel> LoadReportModel(const LoadOptions& options);

// Reads one compare_logs case directory; exposed for tests.
Result<CaseData> LoadCase(const std::filesystem::path& case_dir);

// The most render_report reads of one input file (a report.json, a compare table).
inline constexpr uint64_t kMaxReportFileBytes = uint64_t{256} << 20;
Result<json> ReadJsonFile(const std::filesystem::path& path);

}  // namespace parity::report
