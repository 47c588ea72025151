#include "domain/report/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "domain/report/tarball.h"
#include "support/file_read.h"
#include "support/json_document.h"

namespace parity::report {

namespace fs = std::filesystem;

Result<json> ReadJsonFile(const fs::path& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(path, kMaxReportFileBytes));
  return ParseJsonDocument(text, path.string());  // a nested hunt.json is an error, not a crash
}

namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (quoted) {
      if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else if (c != '\r') {
      cell += c;
    }
  }
  cells.push_back(std::move(cell));
  return cells;
}

double ParseNumber(const std::string& cell) {
  if (cell.empty()) return std::nan("");
  char* end = nullptr;
  double v = std::strtod(cell.c_str(), &end);
  return end && *end == '\0' ? v : std::nan("");
}

Status RequireString(const json& obj, const char* key, const std::string& where) {
  if (!obj.contains(key)) return InvalidArgument(where + "." + key + ": required field is missing");
  if (!obj[key].is_string()) return InvalidArgument(where + "." + key + ": expected string");
  return Status::Ok();
}

}  // namespace

Result<CaseData> LoadCase(const fs::path& case_dir) {
  CaseData c;
  c.report_path = case_dir / "report.json";
  PARITY_ASSIGN_OR_RETURN(c.report, ReadJsonFile(c.report_path));
  const std::string where = c.report_path.string();
  if (!c.report.is_object()) return InvalidArgument(where + ": expected a JSON object");
  if (c.report.value("schema", "") != "parity.compare/1") {
    return InvalidArgument(where + ".schema: expected \"parity.compare/1\"")
        .WithHint("the file must be written by compare_logs (docs/CONTRACTS.md section 3)");
  }
  PARITY_RETURN_IF_ERROR(RequireString(c.report, "case", where));
  PARITY_RETURN_IF_ERROR(RequireString(c.report, "verdict", where));
  PARITY_RETURN_IF_ERROR(RequireString(c.report, "verdict_reason", where));
  static const std::set<std::string> kVerdicts = {"PASS", "FAIL", "INCONCLUSIVE"};
  if (!kVerdicts.count(c.report["verdict"].get<std::string>())) {
    return InvalidArgument(where + ".verdict: expected PASS, FAIL or INCONCLUSIVE");
  }
  for (const char* side : {"baseline", "candidate"}) {
    if (!c.report.contains(side) || !c.report[side].is_object()) {
      return InvalidArgument(where + "." + side + ": required object is missing");
    }
    PARITY_RETURN_IF_ERROR(RequireString(c.report[side], "path", where + "." + side));
  }
  if (!c.report.contains("metrics") || !c.report["metrics"].is_object() || c.report["metrics"].empty()) {
    return InvalidArgument(where + ".metrics: expected a non-empty object");
  }
  c.name = c.report["case"].get<std::string>();

  c.csv_path = case_dir / c.report.value("csv", std::string("diff_summary.csv"));
  PARITY_ASSIGN_OR_RETURN(std::string csv, ReadFileLimited(c.csv_path, kMaxReportFileBytes));
  std::istringstream lines(csv);
  std::string line;
  if (!std::getline(lines, line)) return InvalidArgument(c.csv_path.string() + ": empty file");
  c.csv_header = SplitCsvLine(line);
  if (c.csv_header.empty() || c.csv_header[0] != "step") {
    return InvalidArgument(c.csv_path.string() + ": the first column must be \"step\"");
  }
  while (std::getline(lines, line)) {
    if (line.empty() || line == "\r") continue;
    auto row = SplitCsvLine(line);
    if (row.size() != c.csv_header.size()) {
      return InvalidArgument(c.csv_path.string() + ": line " + std::to_string(c.csv_rows.size() + 2) + " has " +
                             std::to_string(row.size()) + " cells, the header has " +
                             std::to_string(c.csv_header.size()));
    }
    c.csv_rows.push_back(std::move(row));
  }

  // Metric order follows the CSV columns (compare_logs writes them in the order compared).
  // Calibrated comparisons add one <metric>_noise_envelope column per metric after them.
  const std::string envelope_suffix = "_noise_envelope";
  auto is_envelope = [&](const std::string& h) {
    return h.size() > envelope_suffix.size() &&
           h.compare(h.size() - envelope_suffix.size(), envelope_suffix.size(), envelope_suffix) == 0;
  };
  size_t metric_columns = c.csv_header.size();
  for (size_t col = 1; col < c.csv_header.size(); ++col) {
    if (is_envelope(c.csv_header[col])) {
      metric_columns = col;
      break;
    }
  }
  for (size_t col = 1; col < metric_columns; col += 4) {
    const std::string& head = c.csv_header[col];
    const std::string suffix = "_baseline";
    if (head.size() <= suffix.size() || head.compare(head.size() - suffix.size(), suffix.size(), suffix) != 0 ||
        col + 3 >= metric_columns) {
      return InvalidArgument(c.csv_path.string() + ": column " + std::to_string(col + 1) + " \"" + head +
                             "\" should be <metric>_baseline followed by _candidate, _abs_diff, _rel_diff");
    }
    MetricData m;
    m.name = head.substr(0, head.size() - suffix.size());
    if (!c.report["metrics"].contains(m.name)) {
      return InvalidArgument(where + ".metrics." + m.name + ": missing, but " + c.csv_path.string() +
                             " has its columns");
    }
    m.stats = c.report["metrics"][m.name];
    const json& tol = m.stats.contains("tolerance") ? m.stats["tolerance"] : json();
    if (tol.is_object() && tol.contains("abs") && tol["abs"].is_number()) m.tolerance_abs = tol["abs"].get<double>();
    for (const auto& row : c.csv_rows) {
      m.steps.push_back(ParseNumber(row[0]));
      m.baseline.push_back(ParseNumber(row[col]));
      m.candidate.push_back(ParseNumber(row[col + 1]));
      m.abs_diff.push_back(ParseNumber(row[col + 2]));
      m.rel_diff.push_back(ParseNumber(row[col + 3]));
    }
    c.metrics.push_back(std::move(m));
  }
  for (size_t col = metric_columns; col < c.csv_header.size(); ++col) {
    const std::string& head = c.csv_header[col];
    const std::string name = is_envelope(head) ? head.substr(0, head.size() - envelope_suffix.size()) : "";
    auto m = std::find_if(c.metrics.begin(), c.metrics.end(), [&](const MetricData& d) { return d.name == name; });
    if (m == c.metrics.end()) {
      return InvalidArgument(c.csv_path.string() + ": column " + std::to_string(col + 1) + " \"" + head +
                             "\" should be the <metric>_noise_envelope of a metric before it");
    }
    for (const auto& row : c.csv_rows) m->envelope.push_back(ParseNumber(row[col]));
  }
  return c;
}

Result<ReportModel> LoadReportModel(const LoadOptions& options) {
  ReportModel model;
  model.title = options.title;
  model.language = options.language;
  std::error_code ec;
  model.report_dir = fs::absolute(options.report_dir, ec);
  if (!fs::is_directory(model.report_dir, ec)) {
    return NotFound("report directory " + model.report_dir.string() + " does not exist");
  }

  std::vector<std::string> names = options.cases;
  if (names.empty()) {
    for (const auto& entry : fs::directory_iterator(model.report_dir, ec)) {
      const std::string name = entry.path().filename().string();
      const bool gate1 = name.size() > 6 && name.compare(name.size() - 6, 6, ".gate1") == 0 &&
                         fs::is_regular_file(model.report_dir / name.substr(0, name.size() - 6) / "report.json", ec);
      if (entry.is_directory() && fs::is_regular_file(entry.path() / "report.json") && !gate1) names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    if (names.empty()) {
      return NotFound("no <case>/report.json under " + model.report_dir.string())
          .WithHint("run compare_logs with this report_dir first");
    }
  }
  for (const auto& name : names) {
    auto c = LoadCase(model.report_dir / name);
    if (!c.ok()) return std::move(c).take_status().Context("case \"" + name + "\"");
    const fs::path gate1 = model.report_dir / (name + ".gate1") / "report.json";
    if (fs::is_regular_file(gate1, ec)) {
      PARITY_ASSIGN_OR_RETURN(c->gate1, ReadJsonFile(gate1));
    }
    model.cases.push_back(std::move(c).value());
  }

  fs::path manifest = model.report_dir / "manifest.json";
  if (fs::exists(manifest)) {
    PARITY_ASSIGN_OR_RETURN(model.manifest, ReadJsonFile(manifest));
    if (!model.manifest.is_object() || !model.manifest.contains("entries") || !model.manifest["entries"].is_array()) {
      return InvalidArgument(manifest.string() + ".entries: expected an array (docs/CONTRACTS.md section 2)");
    }
  }
  fs::path hunt = model.report_dir / "hunt" / "hunt.json";
  if (fs::exists(hunt)) {
    PARITY_ASSIGN_OR_RETURN(json h, ReadJsonFile(hunt));
    model.hunt = std::move(h);
  }
  fs::path tarball = model.report_dir / "infra_files.tar.gz";
  if (fs::exists(tarball)) {
    model.infra_tarball = tarball;
    PARITY_ASSIGN_OR_RETURN(model.infra_files, ListTarGz(tarball));
  }

  // Every training log: the ones the compare results name, then the ones the ledger wrote.
  std::set<std::string> seen;
  auto add_log = [&](const std::string& label, fs::path path, const std::string& named_by) -> Status {
    if (path.is_relative()) path = model.report_dir / path;
    path = path.lexically_normal();
    if (!seen.insert(path.string()).second) return Status::Ok();
    if (!fs::is_regular_file(path, ec)) {
      return NotFound("training log " + path.string() + " (named by " + named_by + ") does not exist")
          .WithHint("logs must stay where the run wrote them; rerun the training or fix the path");
    }
    model.logs.push_back({label, path});
    return Status::Ok();
  };
  for (const auto& c : model.cases) {
    for (const char* side : {"baseline", "candidate"}) {
      PARITY_RETURN_IF_ERROR(add_log(std::string(side) + " " + c.name, c.report[side]["path"].get<std::string>(),
                                     c.report_path.string() + " " + side + ".path"));
    }
  }
  if (model.manifest.is_object()) {
    for (const auto& e : model.manifest["entries"]) {
      if (!e.is_object() || !e.contains("outputs") || !e["outputs"].is_object()) continue;
      const json& log = e["outputs"].contains("log") ? e["outputs"]["log"] : json();
      const bool ok = e.contains("outcome") && e["outcome"].is_object() && e["outcome"].value("status", "") == "ok";
      if (!log.is_string() || !ok) continue;
      std::string label = e.value("action", std::string("log"));
      if (e.contains("side") && e["side"].is_string()) label = e["side"].get<std::string>() + " " + label;
      if (e.contains("config") && e["config"].is_string()) label += " " + e["config"].get<std::string>();
      PARITY_RETURN_IF_ERROR(add_log(label, log.get<std::string>(),
                                     "manifest.json entry " + e.value("id", std::string("?")) + " outputs.log"));
    }
  }
  return model;
}

}  // namespace parity::report
