#include "tools/compare_logs/compare_logs.h"

#include <cmath>
#include <filesystem>

#include "domain/ledger/ledger.h"
#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/noise.h"
#include "domain/logs/presets.h"
#include "domain/logs/rank_files.h"
#include "domain/logs/result_json.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/compare_logs/compare_logs_schema.h"
#include "tools/parse_log/log_params.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  json baseline, candidate;  // a path (string) or a parse_log file result (object)
  logs::ParseOptions parse;
  logs::CriteriaRequest criteria;
  bool common_steps = false;
  bool user_success_markers = false;  // the user named the lines that finish a run
  std::string case_name = "compare";
  std::optional<std::string> report_dir;
  std::vector<json> noise_runs;  // `noise.runs`: K baseline repeats (empty: no calibration)
  double safety_factor = logs::kDefaultSafetyFactor;
};

void DecodeTolerance(JsonReader& r, logs::Tolerance& t) {
  std::optional<double> abs, rel;
  r.Optional("abs", abs).Optional("rel", rel);
  if (!r.ok()) return;
  if (!abs && !rel) r.Fail(r.path(), "give abs, rel or both");
  for (auto [name, v] : {std::pair{"abs", abs}, std::pair{"rel", rel}}) {
    if (v && (*v < 0 || !std::isfinite(*v))) r.Fail(r.Child(name), "must be a finite number >= 0");
  }
  t.abs = abs;
  t.rel = rel;
}

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  JsonReader r(arguments, "arguments");
  std::optional<std::string> preset, steps, case_name;
  bool bitwise = false;
  json tolerances;
  r.Required("baseline", p.baseline).Required("candidate", p.candidate);
  r.Optional("preset", preset).Optional("bitwise", bitwise).Optional("steps", steps);
  r.Optional("case", case_name).Optional("report_dir", p.report_dir).Optional("tolerances", tolerances);
  if (r.Has("tolerance")) {
    logs::Tolerance t;
    r.Object("tolerance", false, [&](JsonReader& inner) { DecodeTolerance(inner, t); });
    p.criteria.tolerance = t;
  }
  if (r.Has("probe_tolerance")) {
    logs::Tolerance t;
    r.Object("probe_tolerance", false, [&](JsonReader& inner) { DecodeTolerance(inner, t); });
    p.criteria.probe_tolerance = t;
  }
  DecodeParseOptions(r, p.parse);
  p.user_success_markers = r.Has("success_markers");
  for (const char* side : {"baseline", "candidate"}) {
    const json& v = side[0] == 'b' ? p.baseline : p.candidate;
    if (!r.ok()) break;
    if (!(v.is_string() && !v.get<std::string>().empty()) && !v.is_object()) {
      r.Fail(r.Child(side), std::string("expected a log path (string) or a parse_log result (object), got ") +
                                JsonTypeName(v));
    }
  }
  if (r.ok() && preset) {
    r.OneOf("preset", *preset, {"premerge", "precision-comparer", "torchtitan-npu"});
    p.criteria.preset = *preset;
  }
  if (r.ok() && steps) {
    r.OneOf("steps", *steps, {"strict", "common"});
    p.common_steps = *steps == "common";
  }
  if (r.ok() && case_name) {
    Status s = logs::ValidateCaseName(*case_name);
    if (!s.ok()) r.Fail(r.Child("case"), s.message());
    p.case_name = *case_name;
  }
  if (r.ok() && !tolerances.is_null()) {
    if (!tolerances.is_object()) {
      r.Fail(r.Child("tolerances"), std::string("expected object, got ") + JsonTypeName(tolerances));
    } else {
      for (auto it = tolerances.begin(); r.ok() && it != tolerances.end(); ++it) {
        const std::string at = r.Child("tolerances") + "." + it.key();
        if (!it.value().is_object()) {
          r.Fail(at, std::string("expected object, got ") + JsonTypeName(it.value()));
          break;
        }
        JsonReader inner(it.value(), at);
        logs::Tolerance t;
        DecodeTolerance(inner, t);
        Status s = inner.Finish();
        if (!s.ok()) return s;
        p.criteria.tolerances[it.key()] = t;
      }
    }
  }
  if (r.Has("noise")) {
    r.Object("noise", false, [&](JsonReader& inner) {
      json runs;
      inner.Required("runs", runs).Optional("safety_factor", p.safety_factor);
      if (!inner.ok()) return;
      if (!runs.is_array() || runs.size() < 2) {
        inner.Fail(inner.Child("runs"), "expected an array of at least 2 baseline runs");
        return;
      }
      for (size_t i = 0; i < runs.size(); ++i) {
        if (!(runs[i].is_string() && !runs[i].get<std::string>().empty()) && !runs[i].is_object()) {
          inner.Fail(inner.Child("runs") + "[" + std::to_string(i) + "]", "expected a log path or a parse_log result");
          return;
        }
        p.noise_runs.push_back(runs[i]);
      }
      if (!(p.safety_factor >= 1) || !std::isfinite(p.safety_factor)) {
        inner.Fail(inner.Child("safety_factor"), "must be a finite number >= 1");
      }
    });
  }
  PARITY_RETURN_IF_ERROR(r.Finish());
  if (!p.noise_runs.empty() && bitwise) {
    return InvalidArgument("arguments.noise: a calibrated verdict and bitwise mode exclude each other")
        .WithHint("leave bitwise out: where the baseline runs repeat bit for bit the envelope is 0 anyway");
  }
  p.criteria.bitwise = bitwise;
  p.criteria.metrics = r.Has("metrics") ? p.parse.metrics : std::vector<std::string>{};
  return p;
}

// A side given as a path is parsed (hashing it on the way); an object is read back.
Result<logs::ParseResult> LoadSide(const json& side, const std::string& where, logs::ParseOptions options,
                                   mcp::ToolContext& ctx) {
  if (side.is_object()) {
    // A bounded parse_log result names the file holding its series: a path like any other.
    if (side.contains("series_file") && side["series_file"].is_string()) {
      PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, side["series_file"].get<std::string>(), policy::Access::kRead,
                                           where + ".series_file")
                                 .status());
    }
    return logs::ParseResultFromJson(side, where);
  }
  const std::string given = side.get<std::string>();
  const std::string label = where.substr(10) + " log";  // "arguments.baseline" -> "baseline log"
  // A folder of per-rank logs or a pattern is one run read from several files (a
  // TensorBoard folder stays one path); every file is read only inside the user's folders.
  auto paths = logs::ExpandLogPaths({given});
  if (!paths.ok()) return std::move(paths).take_status().Context(label);
  for (const auto& path : *paths) {
    PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, path, policy::Access::kRead, where + " (" + path.string() + ")").status());
  }
  options.sha256 = true;
  const double side_index = where == "arguments.baseline" ? 0 : 1;
  const double count = static_cast<double>(paths->size());
  const std::optional<int> asked_rank = options.rank;
  if (paths->size() > 1) options.rank.reset();  // each file's own ranks; the merge picks
  std::vector<logs::ParseResult> files;
  for (size_t i = 0; i < paths->size(); ++i) {
    const std::string path = (*paths)[i].string();
    options.progress = [&ctx, side_index, i, count, path](uint64_t done, uint64_t total) {
      const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
      ctx.Progress(side_index + (static_cast<double>(i) + fraction) / count, 2, "reading " + path);
    };
    auto parsed = logs::ParseLog(path, options);
    if (!parsed.ok()) return std::move(parsed).take_status().Context(label);
    files.push_back(std::move(parsed).value());
  }
  if (files.size() == 1) return std::move(files.front());
  auto merged = logs::MergeRankLogs(std::move(files), fs::absolute(given).lexically_normal().string(), asked_rank);
  if (!merged.ok()) return std::move(merged).take_status().Context(label);
  return merged;
}

std::string Relative(const fs::path& p, const fs::path& base) {
  std::error_code ec;
  auto rel = fs::relative(p, base, ec);
  return ec ? p.string() : rel.string();
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  Params& p = *params;
  auto criteria = logs::BuildCriteria(p.criteria);
  if (!criteria.ok()) return mcp::ToolResult::Error(criteria.status());
  fs::path report_dir = p.report_dir ? fs::path(*p.report_dir) : ctx.report_dir();
  if (report_dir.empty()) report_dir = fs::current_path() / "numerical_report";
  report_dir = fs::absolute(report_dir);
  auto writable = AuthorizePath(ctx, report_dir, policy::Access::kWrite, "arguments.report_dir");
  if (!writable.ok()) return mcp::ToolResult::Error(writable.status());

  // Parse only what is compared (and the user's keywords).
  logs::ParseOptions parse = p.parse;
  parse.metrics.clear();
  for (const auto& m : criteria->metrics) parse.metrics.push_back(m.metric);
  parse.cancel = ctx.cancellation();
  // One rule per preset: its own markers finish a run, unless the user named others.
  if (criteria->require_success_marker) {
    if (p.user_success_markers) {
      criteria->success_markers = p.parse.success_markers;
    } else {
      parse.success_markers = criteria->success_markers;
    }
  }
  auto baseline = LoadSide(p.baseline, "arguments.baseline", parse, ctx);
  if (!baseline.ok()) return mcp::ToolResult::Error(baseline.status());
  auto candidate = LoadSide(p.candidate, "arguments.candidate", parse, ctx);
  if (!candidate.ok()) return mcp::ToolResult::Error(candidate.status());

  auto comparison = logs::CompareRuns(*baseline, *candidate, *criteria, p.criteria.preset, p.common_steps);
  if (!comparison.ok()) return mcp::ToolResult::Error(comparison.status());

  // Calibrated verdict: the K baseline repeats' envelope replaces the per-step tolerance.
  std::optional<logs::NoiseEnvelopes> noise;
  if (!p.noise_runs.empty()) {
    std::vector<logs::ParseResult> runs;
    for (size_t i = 0; i < p.noise_runs.size(); ++i) {
      auto run = LoadSide(p.noise_runs[i], "arguments.noise.runs[" + std::to_string(i) + "]", parse, ctx);
      if (!run.ok()) return mcp::ToolResult::Error(run.status());
      runs.push_back(std::move(run).value());
    }
    std::vector<const logs::ParseResult*> pointers;
    for (const auto& r : runs) pointers.push_back(&r);
    std::vector<std::string> metrics;
    for (const auto& m : comparison->metrics) metrics.push_back(m.metric);
    auto envelopes = logs::ComputeNoiseEnvelopes(pointers, metrics, p.safety_factor);
    if (!envelopes.ok()) return mcp::ToolResult::Error(envelopes.status());
    Status applied = logs::ApplyNoiseEnvelopes(*comparison, *envelopes, *baseline, *candidate);
    if (!applied.ok()) return mcp::ToolResult::Error(applied);
    noise = std::move(envelopes).value();
  }

  const fs::path case_dir = report_dir / p.case_name;
  json report = logs::CompareReportJson(p.case_name, *baseline, *candidate, *comparison);
  if (noise) {
    report["mode"] = "calibrated";
    report["noise"] = logs::NoiseJson(*noise);
  }
  Status written = logs::WriteCompareReport(case_dir, report, *comparison);
  if (!written.ok()) return mcp::ToolResult::Error(std::move(written).Context("writing the compare report"));

  ledger::Entry e;
  e.tool = "compare_logs";
  e.action = "compare";
  e.side = "both";
  e.config = p.case_name;
  // The ledger keeps this call's own arguments (paths made absolute, the case named) so that
  // `parity reproduce` can make the same call again; what was read goes in the outcome.
  json inputs = arguments.is_object() ? arguments : json::object();
  inputs.erase("confirmations");
  inputs.erase("report_dir");
  if (report["baseline"].contains("path")) inputs["baseline"] = report["baseline"]["path"];
  if (report["candidate"].contains("path")) inputs["candidate"] = report["candidate"]["path"];
  inputs["case"] = p.case_name;
  e.inputs = std::move(inputs);
  e.outputs = {{"report", Relative(case_dir / "report.json", report_dir)},
               {"csv", Relative(case_dir / "diff_summary.csv", report_dir)}};
  e.outcome = {{"status", "ok"}, {"verdict", report["verdict"]}, {"message", report["verdict_reason"]},
               {"baseline_sha256", report["baseline"]["sha256"]}, {"candidate_sha256", report["candidate"]["sha256"]},
               {"mode", report["mode"]}, {"steps", report["steps"]}};
  if (comparison->probes) {
    const auto& probes = report["probes"];
    e.outcome["probes"] = {{"matched", probes["matched"]}, {"divergent_count", probes["divergent_count"]},
                           {"first_divergent", probes["first_divergent"].is_null() ? json(nullptr)
                                                                                  : probes["first_divergent"]["key"]}};
  }
  auto id = ledger::Append(report_dir, e);
  if (!id.ok()) return mcp::ToolResult::Error(std::move(id).take_status().Context("recording the comparison in the ledger"));

  report["report"] = (case_dir / "report.json").string();
  report["csv_path"] = (case_dir / "diff_summary.csv").string();
  report["ledger_entry"] = *id;
  std::string summary = std::string("compare_logs: ") + logs::VerdictName(comparison->verdict) + " — " +
                        comparison->reason + "\nreport: " + report["report"].get<std::string>();
  if (comparison->probes) summary += "\n" + comparison->probes->Summary();
  return mcp::ToolResult::Structured(std::move(report), summary);
}

}  // namespace

mcp::Tool MakeCompareLogsTool() {
  mcp::Tool tool;
  tool.spec.name = "compare_logs";
  tool.spec.title = "Compare baseline and candidate training metrics";
  tool.spec.description =
      "Skill step 5 / PrecisionComparer step 6: compares two runs (log paths, folders or patterns of per-rank "
      "logs, TensorBoard event files, or parse_log results) metric by metric, every rank: max and mean absolute and relative difference with their steps, "
      "the first step beyond tolerance and how many, NaN/Inf counts per side. Tolerance per metric (default "
      "|diff| <= 1e-5), bitwise mode, or a preset (premerge, precision-comparer, torchtitan-npu). The verdict "
      "is PASS, FAIL (with the offending steps and values) or INCONCLUSIVE when the printed decimals cannot "
      "resolve the tolerance (then read TensorBoard events or raise the log's precision). Runs that do not "
      "cover the same steps are an error naming both ranges. Writes <report_dir>/<case>/report.json and "
      "diff_summary.csv and records a ledger entry. When either log has inject_prints' PARITY_PROBE lines, "
      "\"probes\" pairs them (id|when|name|call|rank, baseline order) and names the first probe whose hash "
      "differs, with both records; a log with probes but no metric lines gives INCONCLUSIVE plus the probes.";
  tool.spec.input_schema = CompareLogsInputSchema();
  tool.spec.output_schema = CompareLogsOutputSchema();
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = false;
  tool.spec.annotations.idempotent = false;  // each call appends a ledger entry
  tool.spec.annotations.open_world = false;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
