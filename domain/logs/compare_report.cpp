#include "domain/logs/compare_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <tuple>
#include <cstdio>
#include <fstream>

#include "domain/logs/result_json.h"
#include "domain/logs/number_text.h"
#include "support/safe_file.h"

namespace parity::logs {
namespace {

using json = nlohmann::json;

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

json OptionalNumber(const std::optional<double>& v) { return v ? ValueToJson(*v) : json(nullptr); }
json OptionalInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json Side(const ParseResult& r) {
  json errors = json::array();
  for (const auto& e : r.errors) {
    if (errors.size() >= 50) break;
    json je = {{"line", e.line}, {"kind", e.kind}, {"text", e.text}};
    if (e.rank) je["rank"] = *e.rank;
    errors.push_back(std::move(je));
  }
  json warnings = json::array();
  for (const auto& w : r.warnings) warnings.push_back({{"code", w.code}, {"message", w.message}});
  json steps = nullptr;
  if (r.steps.first) steps = json::array({*r.steps.first, *r.steps.last});
  json side = {{"path", r.path},
          {"sha256", r.sha256.empty() ? json(nullptr) : json(r.sha256)},
          {"format", FormatName(r.format)},
          {"steps", steps},
          {"success_marker", r.text_log ? json(r.success_marker) : json(nullptr)},
          {"errors", std::move(errors)},
          {"errors_total", r.errors_total},
          {"error_counts", r.error_counts},
          {"warnings", std::move(warnings)}};
  if (!r.sources.empty()) side["files"] = SourcesToJson(r.sources);
  return side;
}

json DecimalsJson(const PrecisionSummary& p) { return p.exact ? json(nullptr) : json(p.min_decimals); }

json OptionalIntValue(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }

json MetricJson(const MetricComparison& m) {
  json per_rank = json::array();
  for (const auto& r : m.per_rank) {
    per_rank.push_back({{"rank", r.rank < 0 ? json(nullptr) : json(r.rank)},
                        {"verdict", r.placeholder ? json(nullptr) : json(VerdictName(r.verdict))},
                        {"placeholder", r.placeholder},
                        {"steps_compared", r.steps_compared},
                        {"equal_steps", r.equal_steps},
                        {"first_differing_step", OptionalInt(r.first_differing_step)},
                        {"first_exceeding_step", OptionalInt(r.first_exceeding_step)},
                        {"exceeding_count", r.exceeding_count},
                        {"uncertain_count", r.uncertain_count},
                        {"max_abs", ValueToJson(r.max_abs)},
                        {"max_abs_step", OptionalInt(r.max_abs_step)}});
  }
  json tolerance = nullptr;
  if (m.criteria.per_step && !m.criteria.bitwise) {
    tolerance = {{"abs", OptionalNumber(m.criteria.per_step->abs)}, {"rel", OptionalNumber(m.criteria.per_step->rel)}};
  }
  json offending = json::array();
  for (const auto& o : m.offending) {
    offending.push_back({{"step", o.step},
                         {"baseline", ValueToJson(o.baseline)},
                         {"candidate", ValueToJson(o.candidate)},
                         {"abs", ValueToJson(o.abs)},
                         {"rel", ValueToJson(o.rel)},
                         {"certain", o.certain}});
  }
  json checks = json::array();
  for (const auto& c : m.checks) {
    checks.push_back({{"name", c.name},
                      {"outcome", VerdictName(c.outcome)},
                      {"value", OptionalNumber(c.value)},
                      {"uncertainty", OptionalNumber(c.uncertainty)},
                      {"threshold", OptionalNumber(c.threshold)},
                      {"message", c.message}});
  }
  auto nf = [](const NonFinite& n) { return json{{"nan", n.nan}, {"inf", n.inf}}; };
  return {{"verdict", VerdictName(m.verdict)},
          {"reason", m.reason},
          {"rank", OptionalIntValue(m.rank)},
          {"ranks", std::move(per_rank)},
          {"equal_steps", m.equal_steps},
          {"bitwise_equal_steps", m.bitwise_equal_steps},
          {"first_differing_step", OptionalInt(m.first_differing_step)},
          {"tolerance", tolerance},
          {"bitwise_mode", m.criteria.bitwise},
          {"printed_decimals", {{"baseline", DecimalsJson(m.baseline_precision)},
                                {"candidate", DecimalsJson(m.candidate_precision)}}},
          {"full_precision", m.full_precision},
          {"resolution", m.worst_uncertainty},
          {"steps_compared", m.steps_compared},
          {"steps_dropped", m.steps_dropped},
          {"max_abs", ValueToJson(m.max_abs)},
          {"max_abs_step", OptionalInt(m.max_abs_step)},
          {"mean_abs", ValueToJson(m.mean_abs)},
          {"max_rel", ValueToJson(m.max_rel)},
          {"max_rel_step", OptionalInt(m.max_rel_step)},
          {"mean_rel", ValueToJson(m.mean_rel)},
          {"first_exceeding_step", OptionalInt(m.first_exceeding_step)},
          {"exceeding_count", m.exceeding_count},
          {"uncertain_count", m.uncertain_count},
          {"first_uncertain_step", OptionalInt(m.first_uncertain_step)},
          {"nan_inf", {{"baseline", nf(m.baseline_non_finite)}, {"candidate", nf(m.candidate_non_finite)}}},
          {"bitwise_equal", m.identical && m.full_precision},
          {"identical_as_printed", m.identical},
          {"offending", std::move(offending)},
          {"checks", std::move(checks)}};
}

Status WriteAtomically(const std::filesystem::path& path, const std::string& content) {
  return WriteFileAtomic(path, content);  // the temporary file too: no symlink followed
}

std::string DiffCsv(const RunComparison& c) {
  std::string out = "step";
  for (const auto& m : c.metrics) {
    out += "," + m.metric + "_baseline," + m.metric + "_candidate," + m.metric + "_abs_diff," + m.metric + "_rel_diff";
  }
  // Calibrated comparisons: the envelopes after every metric's four columns.
  for (const auto& m : c.metrics) {
    if (!m.envelope.empty()) out += "," + m.metric + "_noise_envelope";
  }
  out += '\n';
  size_t rows = 0;
  for (const auto& m : c.metrics) rows = std::max(rows, m.keys.size());
  out.reserve(out.size() + rows * (12 + c.metrics.size() * 4 * 24));
  // Rows are the union of the metrics' steps; a metric without a step leaves its cells empty.
  std::vector<size_t> pos(c.metrics.size(), 0);
  while (true) {
    int64_t step = INT64_MAX;
    for (size_t i = 0; i < c.metrics.size(); ++i) {
      if (pos[i] < c.metrics[i].keys.size()) step = std::min(step, c.metrics[i].keys[pos[i]]);
    }
    if (step == INT64_MAX) break;
    char step_text[24];
    out.append(step_text, std::to_chars(step_text, step_text + sizeof step_text, step).ptr);
    std::string envelopes;
    for (size_t i = 0; i < c.metrics.size(); ++i) {
      const auto& m = c.metrics[i];
      if (!m.envelope.empty()) {
        envelopes += ',';
        if (pos[i] < m.keys.size() && m.keys[pos[i]] == step) AppendNumber(envelopes, m.envelope[pos[i]]);
      }
      if (pos[i] < m.keys.size() && m.keys[pos[i]] == step) {
        const double b = m.baseline_values[pos[i]], v = m.candidate_values[pos[i]];
        const double abs = (std::isnan(b) && std::isnan(v)) || b == v ? 0.0 : std::fabs(v - b);
        const double rel = abs == 0 ? 0.0 : abs / std::fabs(b);
        out += ',';
        AppendNumber(out, b);
        out += ',';
        AppendNumber(out, v);
        out += ',';
        AppendNumber(out, abs);
        out += ',';
        AppendNumber(out, rel);
        ++pos[i];
      } else {
        out += ",,,,";
      }
    }
    out += envelopes;
    out += '\n';
  }
  return out;
}

std::string ErrorNote(const std::string& side, const ParseResult& r) {
  std::string note = side + " log reports " + std::to_string(r.errors_total) + " error line(s)";
  if (!r.errors.empty()) {
    const auto& e = r.errors.front();
    note += ", first at line " + std::to_string(e.line) + " (" + e.kind + "): " + e.text.substr(0, 200);
  }
  return note;
}

// Every series of `metric` a side has: the result's own rank first, then the others.
std::vector<std::pair<int, const MetricResult*>> SeriesOf(const ParseResult& r, const std::string& metric) {
  std::vector<std::pair<int, const MetricResult*>> out;
  if (const MetricResult* m = r.Find(metric)) out.push_back({r.rank.value_or(-1), m});
  for (const auto& rank : r.other_ranks) {
    if (const MetricResult* m = rank.Find(metric)) out.push_back({rank.rank, m});
  }
  return out;
}

std::string RankName(int rank) { return rank < 0 ? "unprefixed lines" : "rank " + std::to_string(rank); }

RankSummary Summary(int rank, const MetricComparison& m) {
  RankSummary s;
  s.rank = rank;
  s.verdict = m.verdict;
  s.steps_compared = m.steps_compared;
  s.equal_steps = m.equal_steps;
  s.exceeding_count = m.exceeding_count;
  s.uncertain_count = m.uncertain_count;
  s.first_differing_step = m.first_differing_step;
  s.first_exceeding_step = m.first_exceeding_step;
  s.max_abs_step = m.max_abs_step;
  s.max_abs = m.max_abs;
  return s;
}

// The metric compared on every rank both sides print it on (by rank number; when they
// share none, their own ranks with each other). A series that is a placeholder on both
// sides is not compared; the others all are, and the worst comparison is returned, with
// every rank's outcome in per_rank.
Result<MetricComparison> CompareEveryRank(const MetricCriteria& c, const ParseResult& baseline,
                                          const ParseResult& candidate, bool common_steps_only,
                                          std::vector<std::string>& notes) {
  const auto bs = SeriesOf(baseline, c.metric), cs = SeriesOf(candidate, c.metric);
  std::vector<std::pair<const std::pair<int, const MetricResult*>*, const std::pair<int, const MetricResult*>*>> pairs;
  std::vector<int> only_baseline, only_candidate;
  for (const auto& b : bs) {
    auto it = std::find_if(cs.begin(), cs.end(), [&](const auto& v) { return v.first == b.first; });
    if (it == cs.end()) {
      only_baseline.push_back(b.first);
    } else {
      pairs.push_back({&b, &*it});
    }
  }
  for (const auto& v : cs) {
    if (std::none_of(bs.begin(), bs.end(), [&](const auto& b) { return b.first == v.first; }))
      only_candidate.push_back(v.first);
  }
  if (pairs.empty()) {
    pairs.push_back({&bs.front(), &cs.front()});
    notes.push_back(c.metric + ": the two logs share no rank; baseline " + RankName(bs.front().first) +
                    " was compared with candidate " + RankName(cs.front().first));
  } else {
    for (int r : only_baseline) notes.push_back(c.metric + ": " + RankName(r) + " is only in the baseline; not compared");
    for (int r : only_candidate) notes.push_back(c.metric + ": " + RankName(r) + " is only in the candidate; not compared");
  }
  std::vector<MetricComparison> done;
  std::vector<RankSummary> summaries;
  for (const auto& [b, v] : pairs) {
    if (b->second->placeholder && v->second->placeholder) {
      RankSummary s;
      s.rank = b->first;
      s.placeholder = true;
      summaries.push_back(s);
      notes.push_back(c.metric + ": " + RankName(b->first) +
                      " prints a placeholder (the same value at every step while other ranks vary) in both "
                      "logs; not compared");
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(MetricComparison m,
                            CompareSeries(c.metric, b->second->series, v->second->series, c, common_steps_only));
    if (b->first >= 0) m.rank = b->first;
    summaries.push_back(Summary(b->first, m));
    done.push_back(std::move(m));
  }
  if (done.empty()) {
    return FailedPrecondition("'" + c.metric + "' is a placeholder on every rank both logs print it on: "
                              "nothing meaningful to compare")
        .WithHint("read the ranks that compute it (the last pipeline stage): both logs must include them");
  }
  size_t worst = 0;
  for (size_t i = 1; i < done.size(); ++i) {
    if (Worst(done[worst].verdict, done[i].verdict) != done[worst].verdict) worst = i;
  }
  MetricComparison out = std::move(done[worst]);
  if (summaries.size() > 1) {
    size_t compared = 0;
    for (const auto& s : summaries) compared += s.placeholder ? 0 : 1;
    out.reason = (out.rank ? "rank " + std::to_string(*out.rank) + " (the worst of " + std::to_string(compared) +
                                 " ranks compared): "
                           : std::string()) +
                 out.reason;
    out.per_rank = std::move(summaries);
  }
  return out;
}

}  // namespace

Result<RunComparison> CompareRuns(const ParseResult& baseline, const ParseResult& candidate,
                                  const Criteria& criteria, std::optional<std::string> preset,
                                  bool common_steps_only) {
  RunComparison out;
  out.preset = std::move(preset);
  out.common_steps_only = common_steps_only;
  const bool have_probes = baseline.probes.any() || candidate.probes.any();
  if (have_probes) out.probes = CompareProbes(baseline.probes, candidate.probes, criteria.probe_tolerance);
  std::vector<std::string> skipped;
  for (const auto& c : criteria.metrics) {
    out.bitwise = out.bitwise || c.bitwise;
    const MetricResult* b = baseline.Find(c.metric);
    const MetricResult* v = candidate.Find(c.metric);
    if (!b && !v && have_probes) {
      skipped.push_back(c.metric);
      continue;
    }
    for (auto [side, r, m] : {std::tuple{"baseline", &baseline, b}, std::tuple{"candidate", &candidate, v}}) {
      if (m) continue;
      return FailedPrecondition("metric '" + c.metric + "' is not in the " + side + " (" + r->path +
                                "); it has: " + (r->available_metrics.empty() ? std::string("no metrics")
                                                                              : Join(r->available_metrics, ", ")))
          .WithHint("choose metrics both runs print, or read them with keywords/regex (parse_log)");
    }
    PARITY_ASSIGN_OR_RETURN(MetricComparison compared,
                            CompareEveryRank(c, baseline, candidate, common_steps_only, out.notes));
    out.verdict = Worst(out.verdict, compared.verdict);
    if (compared.steps_dropped > 0) {
      out.notes.push_back(c.metric + ": " + std::to_string(compared.steps_dropped) +
                          " steps logged by only one run were not compared");
    }
    out.metrics.push_back(std::move(compared));
  }
  if (!skipped.empty()) {
    out.notes.push_back("neither log prints " + Join(skipped, " or ") + "; only the probes were compared for them");
  }
  if (out.probes) {
    out.notes.push_back(out.probes->Summary());
    for (const auto& n : out.probes->notes) out.notes.push_back("probes: " + n);
  }
  if (baseline.errors_total > 0) out.notes.push_back(ErrorNote("baseline", baseline));
  if (candidate.errors_total > 0) out.notes.push_back(ErrorNote("candidate", candidate));

  std::vector<std::string> reasons;
  for (const auto& m : out.metrics) {
    if (m.verdict == out.verdict) reasons.push_back(m.reason);
  }
  if (criteria.require_success_marker) {
    // The preset's markers only: a line of another marker the parse looked for (a
    // trainer's own end line) does not finish a PrecisionComparer run.
    const auto finished = [&](const ParseResult& r) {
      if (!r.success_marker) return false;
      if (criteria.success_markers.empty()) return true;
      return std::any_of(criteria.success_markers.begin(), criteria.success_markers.end(),
                         [&](const std::string& m) { return r.success_text.find(m) != std::string::npos; });
    };
    std::string markers;
    for (const auto& m : criteria.success_markers) markers += (markers.empty() ? "\"" : " or \"") + m + "\"";
    for (auto [side, r] : {std::pair{"baseline", &baseline}, std::pair{"candidate", &candidate}}) {
      if (!r->text_log || finished(*r)) continue;
      const std::string why = std::string(side) + " log has no success marker (" +
                              (markers.empty() ? std::string("none found") : markers) +
                              "): the run may not have finished";
      out.notes.push_back(why);
      if (out.verdict == Verdict::kPass) {
        out.verdict = Verdict::kInconclusive;
        reasons = {why};
      } else if (out.verdict == Verdict::kInconclusive) {
        reasons.push_back(why);
      }
    }
  }
  if (out.metrics.empty() && out.probes) {
    // Only probes: nothing to pass or fail on the metrics.
    out.verdict = Verdict::kInconclusive;
    out.reason = "no metric was compared (neither log prints " + Join(skipped, " or ") + "); " +
                 out.probes->Summary();
  } else if (out.verdict == Verdict::kPass) {
    std::vector<std::string> names;
    for (const auto& m : out.metrics) names.push_back(m.metric);
    bool identical = true, full = true;
    for (const auto& m : out.metrics) {
      identical = identical && m.identical;
      full = full && m.full_precision;
    }
    out.reason = "all " + std::to_string(out.metrics.empty() ? 0 : out.metrics.front().steps_compared) +
                 " steps of " + Join(names, " and ") + " pass";
    if (identical) out.reason += full ? " (bitwise equal)" : " (identical as printed)";
    out.reason += "; " + Join(reasons, "; ");
  } else {
    out.reason = Join(reasons, "; ");
  }
  return out;
}

nlohmann::json CompareReportJson(const std::string& case_name, const ParseResult& baseline,
                                 const ParseResult& candidate, const RunComparison& c) {
  json metrics = json::object();
  for (const auto& m : c.metrics) metrics[m.metric] = MetricJson(m);
  json report = {{"schema", "parity.compare/1"},
                 {"case", case_name},
                 {"verdict", VerdictName(c.verdict)},
                 {"verdict_reason", c.reason},
                 {"preset", c.preset ? json(*c.preset) : json(nullptr)},
                 {"mode", c.bitwise ? "bitwise" : "tolerance"},
                 {"steps", c.common_steps_only ? "common" : "strict"},
                 {"baseline", Side(baseline)},
                 {"candidate", Side(candidate)},
                 {"metrics", std::move(metrics)},
                 {"notes", c.notes},
                 {"csv", "diff_summary.csv"}};
  if (c.probes) report["probes"] = ProbeComparisonJson(*c.probes);
  return report;
}

Status WriteCompareReport(const std::filesystem::path& dir, const nlohmann::json& report,
                          const RunComparison& comparison) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create " + dir.string() + ": " + ec.message());
  PARITY_RETURN_IF_ERROR(WriteAtomically(dir / "diff_summary.csv", DiffCsv(comparison)));
  return WriteAtomically(dir / "report.json", report.dump(2) + "\n");
}

Status ValidateCaseName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 128)
    return InvalidArgument("case: must be 1-128 characters and not \".\" or \"..\"");
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == '-';
    if (!ok) return InvalidArgument("case: \"" + name + "\" may only use letters, digits, '.', '_' and '-'");
  }
  return Status::Ok();
}

}  // namespace parity::logs
