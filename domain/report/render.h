// render_report's domain entry point: reads the report directory, writes the requested
// formats under <report_dir>/report/, optionally mails the result, and records both acts
// in the ledger. Outputs (docs/CONTRACTS.md section 1):
//   report/report.html, report/numerical_stability_report.pdf, report/pr_summary.pdf (format
//   "pdf" writes both), report/charts/<id>.png,
//   report/<case>_diff_summary.csv, report/reproduce.json
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/report/mail.h"
#include "domain/report/model.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::report {

inline const std::set<std::string> kAllFormats = {"html", "pdf", "png", "csv", "reproduce"};

struct RenderOptions {
  std::filesystem::path report_dir;
  std::vector<std::string> cases;  // empty: all
  std::string title;               // empty: the default title in the language
  Language language = Language::kZh;
  std::set<std::string> formats = kAllFormats;
  std::optional<MailServer> mail;
  std::string mail_subject;        // empty: title and verdict
  size_t mail_attachment_limit = size_t{25} << 20;  // bytes, all attachments together
  CancellationToken cancel;
  std::function<void(double done, double total, const std::string& what)> progress;
};

struct RenderResult {
  std::string verdict;             // overall
  nlohmann::json cases;            // [{"case","verdict","verdict_reason"}]
  nlohmann::json outputs;          // {"html","pdf","pr_summary","reproduce": abs path, "charts":[...], "csv":[...]}
  nlohmann::json mail;             // null, or {"to":[...], "attachments":[...], "bytes": n}
  std::vector<std::string> notes;  // things the reader should know (replaced glyphs...)
  std::string ledger_id;
};

Result<RenderResult> RenderReport(const RenderOptions& options);

}  // namespace parity::report
