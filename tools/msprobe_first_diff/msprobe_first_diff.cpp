#include "tools/msprobe_first_diff/msprobe_first_diff.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>

#include "domain/ledger/ledger.h"
#include "domain/msprobe/analyze.h"
#include "domain/msprobe/scan.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/msprobe_first_diff/msprobe_first_diff_schema.h"

namespace parity::tools {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  std::optional<std::string> baseline_dump, candidate_dump, compare_result;
  std::optional<int64_t> step, rank;
  std::optional<int64_t> threads, memory_budget_mib;
  std::string criterion = "msprobe";
  double abs_tol = 0, rel_tol = 0;
  std::vector<std::string> noise_dumps;  // the baseline's repeats: the calibrated criterion
  double safety_factor = 3;
  std::vector<std::string> ignore;
  bool fuzzy_match = false, require_same_shape = false;
  std::optional<std::string> worktree, repo, baseline_ref, report_dir;
  std::string candidate_ref = "HEAD";
  std::map<std::string, std::string> path_map;
  std::vector<std::string> user_code;
  int64_t max_next = 5;
  bool run_msprobe = false;
  bool compare_table = false;
  std::optional<std::string> msprobe_python, msprobe_pythonpath;
  int64_t msprobe_timeout_s = 1800;
};

Result<Params> Decode(const json& arguments) {
  Params p;
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  JsonReader r(arguments, "arguments");
  r.Optional("baseline_dump", p.baseline_dump).Optional("candidate_dump", p.candidate_dump);
  r.Optional("compare_result", p.compare_result).Optional("step", p.step).Optional("rank", p.rank);
  const bool criterion_given = r.Has("criterion");
  r.Optional("criterion", p.criterion).OneOf("criterion", p.criterion, {"msprobe", "bitwise", "tolerance", "calibrated"});
  r.Optional("noise_dumps", p.noise_dumps).Optional("safety_factor", p.safety_factor);
  if (r.ok() && !p.noise_dumps.empty()) {
    if (criterion_given && p.criterion != "calibrated") {
      r.Fail(r.Child("noise_dumps"), "the baseline's repeats are read by the calibrated criterion, not \"" + p.criterion + "\"");
    }
    p.criterion = "calibrated";
  }
  if (r.ok() && p.criterion == "calibrated" && p.noise_dumps.empty()) {
    r.Fail(r.Child("noise_dumps"), "required by the calibrated criterion: one or more dumps of the baseline run again "
                                   "(same code, same environment)");
  }
  for (size_t i = 0; r.ok() && i < p.noise_dumps.size(); ++i) {
    if (p.noise_dumps[i].empty()) r.Fail(r.Child("noise_dumps") + "[" + std::to_string(i) + "]", "must not be empty");
  }
  if (r.ok() && p.noise_dumps.size() > 16) r.Fail(r.Child("noise_dumps"), "at most 16 repeats");
  if (r.ok() && !(p.safety_factor >= 1 && p.safety_factor <= 1e6)) r.Fail(r.Child("safety_factor"), "must be between 1 and 1e6");
  r.Optional("abs_tol", p.abs_tol).Optional("rel_tol", p.rel_tol).Optional("ignore", p.ignore);
  r.Optional("fuzzy_match", p.fuzzy_match).Optional("require_same_shape", p.require_same_shape);
  r.Optional("worktree", p.worktree).Optional("repo", p.repo).Optional("baseline_ref", p.baseline_ref);
  r.Optional("candidate_ref", p.candidate_ref).Optional("path_map", p.path_map).Optional("user_code", p.user_code);
  for (size_t i = 0; r.ok() && i < p.user_code.size(); ++i) {
    if (p.user_code[i].empty()) r.Fail(r.Child("user_code") + "[" + std::to_string(i) + "]", "must not be empty");
  }
  r.Optional("threads", p.threads).Optional("memory_budget_mib", p.memory_budget_mib);
  r.Optional("max_next", p.max_next).Optional("report_dir", p.report_dir).Optional("compare_table", p.compare_table);
  r.Optional("run_msprobe", p.run_msprobe).Optional("msprobe_python", p.msprobe_python);
  r.Optional("msprobe_pythonpath", p.msprobe_pythonpath).Optional("msprobe_timeout_s", p.msprobe_timeout_s);
  if (r.ok() && p.compare_result && (p.baseline_dump || p.candidate_dump)) {
    r.Fail(r.Child("compare_result"), "give either baseline_dump + candidate_dump or compare_result, not both");
  }
  if (r.ok() && !p.compare_result && (!p.baseline_dump || !p.candidate_dump)) {
    r.Fail(r.Child(p.baseline_dump ? "candidate_dump" : "baseline_dump"),
           "required (both dumps), unless compare_result names an msprobe compare result");
  }
  if (r.ok() && p.step && *p.step < 0) r.Fail(r.Child("step"), "must be >= 0");
  if (r.ok() && p.rank && *p.rank < 0) r.Fail(r.Child("rank"), "must be >= 0");
  if (r.ok() && p.threads && (*p.threads < 1 || *p.threads > 256)) r.Fail(r.Child("threads"), "must be between 1 and 256");
  if (r.ok() && p.memory_budget_mib && *p.memory_budget_mib < 1) r.Fail(r.Child("memory_budget_mib"), "must be >= 1");
  if (r.ok() && (p.abs_tol < 0 || p.rel_tol < 0)) r.Fail(r.Child(p.abs_tol < 0 ? "abs_tol" : "rel_tol"), "must be >= 0");
  if (r.ok() && p.criterion == "tolerance" && p.abs_tol == 0 && p.rel_tol == 0) {
    r.Fail(r.Child("criterion"), "\"tolerance\" needs abs_tol or rel_tol (or use \"bitwise\")");
  }
  if (r.ok() && (p.max_next < 0 || p.max_next > 100)) r.Fail(r.Child("max_next"), "must be between 0 and 100");
  if (r.ok() && !p.noise_dumps.empty() && (p.compare_result || p.run_msprobe)) {
    r.Fail(r.Child("noise_dumps"), "the calibrated criterion compares the dumps themselves; drop " +
                                       std::string(p.compare_result ? "compare_result" : "run_msprobe"));
  }
  if (r.ok() && p.run_msprobe && p.compare_result) {
    r.Fail(r.Child("run_msprobe"), "runs msprobe compare on baseline_dump and candidate_dump; drop compare_result");
  }
  if (r.ok() && p.compare_table && (p.compare_result || p.run_msprobe)) {
    r.Fail(r.Child("compare_table"), p.compare_result ? "the compare result is the table: nothing of parity's to write"
                                                      : "run_msprobe writes msprobe's own table (hunt/msprobe_compare/)");
  }
  if (r.ok() && !p.run_msprobe && (p.msprobe_python || p.msprobe_pythonpath)) {
    r.Fail(r.Child(p.msprobe_python ? "msprobe_python" : "msprobe_pythonpath"), "only used with run_msprobe: true");
  }
  if (r.ok() && (p.msprobe_timeout_s < 1 || p.msprobe_timeout_s > 86400)) {
    r.Fail(r.Child("msprobe_timeout_s"), "must be between 1 and 86400");
  }
  PARITY_RETURN_IF_ERROR(r.Finish());
  return p;
}

std::string Summary(const json& out) {
  if (!out["found"].get<bool>()) {
    return "No divergent API: " + out["explanation"].get<std::string>() + ".";
  }
  const json& first = out["first_divergence"];
  std::string s = out.contains("scan") ? "Dump tree: " + out["scan"]["explanation"].get<std::string>() + ". " : "";
  s += "First divergent API: " + first["api"].get<std::string>() + " (" + first["verdict"].get<std::string>() +
                  "): " + first["explanation"].get<std::string>() + ".";
  if (first["user_frame"].is_object()) {
    s += " User code: " + first["user_frame"]["file"].get<std::string>() + ":" +
         std::to_string(first["user_frame"]["line"].get<int>()) + " in " +
         first["user_frame"]["function"].get<std::string>() + ".";
  }
  const json& source = first["source"];
  if (source.is_object() && source["in_changed_hunk"].is_boolean()) {
    s += source["in_changed_hunk"].get<bool>() ? " The line is in a hunk changed between the commits."
                                               : " The line is not in a changed hunk";
    const json& trace = first["cause"]["trace"];
    if (!source["in_changed_hunk"].get<bool>()) s += trace.is_object() ? ": " + trace.value("sentence", "") + "." : ".";
  }
  if (first["msprobe_note"].is_string()) s += " Note: " + first["msprobe_note"].get<std::string>() + ".";
  return s;
}

msprobe::AnalyzeOptions ToOptions(const Params& p, const fs::path& out_dir, mcp::ToolContext& ctx) {
  msprobe::AnalyzeOptions o;
  if (p.baseline_dump) o.baseline_dump = fs::path(*p.baseline_dump);
  if (p.candidate_dump) o.candidate_dump = fs::path(*p.candidate_dump);
  if (p.compare_result) o.compare_result = fs::path(*p.compare_result);
  if (p.step) o.step = static_cast<int>(*p.step);
  if (p.rank) o.rank = static_cast<int>(*p.rank);
  o.compare.fuzzy = p.fuzzy_match;
  o.compare.require_same_shape = p.require_same_shape;
  o.criteria.mode = p.criterion == "bitwise"      ? msprobe::DiffCriteria::Mode::kBitwise
                    : p.criterion == "tolerance"  ? msprobe::DiffCriteria::Mode::kTolerance
                    : p.criterion == "calibrated" ? msprobe::DiffCriteria::Mode::kCalibrated
                                                  : msprobe::DiffCriteria::Mode::kMsprobe;
  for (const auto& d : p.noise_dumps) o.noise_dumps.emplace_back(d);
  o.noise_safety_factor = p.safety_factor;
  o.criteria.abs_tol = p.abs_tol;
  o.criteria.rel_tol = p.rel_tol;
  o.criteria.ignore.insert(o.criteria.ignore.end(), p.ignore.begin(), p.ignore.end());
  if (p.worktree) o.locate.worktree = *p.worktree;
  if (p.repo) o.locate.repo = *p.repo;
  if (p.baseline_ref) o.locate.baseline_ref = *p.baseline_ref;
  o.locate.candidate_ref = p.candidate_ref;
  for (const auto& [from, to] : p.path_map) o.locate.path_map.push_back({from, to});
  o.locate.user_code = p.user_code;
  o.max_next = static_cast<size_t>(p.max_next);
  if (p.run_msprobe) {
    msprobe::MsprobeRunOptions run;
    if (p.msprobe_python) run.python = fs::path(*p.msprobe_python);
    if (p.msprobe_pythonpath) run.python_path = *p.msprobe_pythonpath;
    run.fuzzy = p.fuzzy_match;
    run.timeout = std::chrono::seconds(p.msprobe_timeout_s);
    o.msprobe_run = run;
  }
  o.output_dir = out_dir;
  o.write_compare_table = p.compare_table;
  if (p.compare_table) {
    // The answer first: the table can take many seconds more.
    o.on_answer = [&ctx](const json& answer) { ctx.Progress(1, 2, Summary(answer) + " Writing the compare table."); };
  }
  o.cancel = ctx.cancellation();
  return o;
}


// The dumps, the compare result and the source tree are read, the report directory is
// written: all inside the user's folders. msprobe's interpreter and PYTHONPATH (a folder of
// Python the child imports: code) are the user's to allow.
Status AuthorizeInputs(const Params& p, const fs::path& report_dir, mcp::ToolContext& ctx) {
  using policy::Access;
  const std::pair<const std::optional<std::string>*, const char*> reads[] = {
      {&p.baseline_dump, "arguments.baseline_dump"}, {&p.candidate_dump, "arguments.candidate_dump"},
      {&p.compare_result, "arguments.compare_result"}, {&p.worktree, "arguments.worktree"}, {&p.repo, "arguments.repo"}};
  for (const auto& [value, what] : reads) {
    if (*value) PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, **value, Access::kRead, what).status());
  }
  for (const auto& [from, to] : p.path_map) {
    PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, to, Access::kRead, "arguments.path_map[\"" + from + "\"]").status());
  }
  for (size_t i = 0; i < p.noise_dumps.size(); ++i) {
    PARITY_RETURN_IF_ERROR(
        AuthorizePath(ctx, p.noise_dumps[i], Access::kRead, "arguments.noise_dumps[" + std::to_string(i) + "]").status());
  }
  PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, report_dir, Access::kWrite, "arguments.report_dir").status());
  if (!p.run_msprobe) return Status::Ok();
  policy::RunAction run{"msprobe_first_diff: msprobe compare on the two dumps", {}, "", {}, "local", true};
  if (p.msprobe_python) run.argv = {*p.msprobe_python, "-m", "msprobe.msprobe", "compare", "..."};
  else run.argv = {"msprobe", "compare", "..."};
  if (p.msprobe_pythonpath) run.env["PYTHONPATH"] = *p.msprobe_pythonpath;
  return Authorize(ctx, "msprobe_first_diff", {Judge(ctx.policy(), run)});
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  const Params& p = *params;
  fs::path report_dir = p.report_dir ? fs::absolute(*p.report_dir)
                                     : (ctx.report_dir().empty() ? fs::absolute("numerical_report") : fs::absolute(ctx.report_dir()));
  fs::path out_dir = report_dir / "hunt";
  if (Status s = AuthorizeInputs(p, report_dir, ctx); !s.ok()) return mcp::ToolResult::Error(s);
  ctx.Progress(0, 2, "reading and comparing the dumps");
  auto started = std::chrono::steady_clock::now();
  // A dump tree without step and rank: every (step, rank) pair, the first to diverge answered.
  const bool tree = !p.compare_result && !p.run_msprobe && !p.step && !p.rank &&
                    msprobe::IsDumpTree(*p.baseline_dump, *p.candidate_dump);
  msprobe::ScanOptions scan;
  if (p.threads) scan.threads = static_cast<size_t>(*p.threads);
  if (p.memory_budget_mib) scan.memory_budget = static_cast<uint64_t>(*p.memory_budget_mib) << 20;
  scan.progress = [&ctx](size_t done, size_t total, const std::string& pair) {
    ctx.Progress(static_cast<double>(done) / static_cast<double>(total + 1), 2, pair + " compared (" +
                 std::to_string(done) + " of " + std::to_string(total) + " pairs)");
  };
  if (tree && !p.noise_dumps.empty()) {
    return mcp::ToolResult::Error(
        InvalidArgument("arguments.noise_dumps: the calibrated criterion compares one (step, rank) pair; the dumps "
                        "are trees of several")
            .WithHint("give step and rank (the pair to judge), or the step/rank folders themselves"));
  }
  auto result = tree ? msprobe::AnalyzeDumpTree(ToOptions(p, out_dir, ctx), scan)
                     : msprobe::AnalyzeFirstDiff(ToOptions(p, out_dir, ctx));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  ledger::Entry entry;
  entry.tool = "msprobe_first_diff";
  entry.action = "first_diff";
  entry.side = "both";
  entry.inputs = arguments;
  if (result.ok()) {
    entry.outcome = {{"status", "ok"}, {"duration_s", seconds}, {"message", Summary(*result)}};
    entry.outputs = {{"hunt", "hunt/hunt.json"}};
    if ((*result)["compare_table"].is_string()) {
      entry.outputs["compare_table"] =
          fs::path((*result)["compare_table"].get<std::string>()).lexically_relative(report_dir).generic_string();
    }
    const json& source = (*result)["source"];
    if (source["kind"] == "msprobe_run") {
      // What msprobe ran, as evidence. Not entry.command: parity reproduce replays the whole
      // call from `inputs` (which runs msprobe again), not msprobe alone.
      entry.outcome["msprobe"] = {{"argv", source["msprobe"]["argv"]},
                                  {"env", source["msprobe"]["env"]},
                                  {"exit_code", source["msprobe"]["exit_code"]},
                                  {"duration_s", source["msprobe"]["duration_s"]}};
      entry.outputs["msprobe_log"] =
          fs::path(source["msprobe"]["log_file"].get<std::string>()).lexically_relative(report_dir).generic_string();
    }
  } else {
    entry.outcome = {{"status", result.status().kind() == ErrorKind::kCancelled ? "cancelled" : "failed"},
                     {"duration_s", seconds},
                     {"message", result.status().message()}};
  }
  auto id = ledger::Append(report_dir, entry);
  if (!result.ok()) return mcp::ToolResult::Error(result.status());
  json out = std::move(result).value();
  out["hunt_json"] = (out_dir / "hunt.json").string();
  out["ledger_entry"] = id.ok() ? json(*id) : json(nullptr);
  if (!id.ok()) out["ledger_error"] = id.status().message();
  ctx.Progress(2, 2, "done");
  return mcp::ToolResult::Structured(out, Summary(out));
}

}  // namespace

mcp::Tool MakeMsprobeFirstDiffTool() {
  mcp::Tool tool;
  tool.spec.name = "msprobe_first_diff";
  tool.spec.title = "First divergent operator from msprobe dumps";
  tool.spec.description =
      "Reads two msprobe dump trees (dump.json, stack.json, construct.json; statistics, md5 or tensor mode) for one "
      "rank and step (or every (step, rank) pair of a dump tree, on a bounded pool: the first rank to diverge), or "
      "an existing msprobe compare result (CSV/XLSX), matches them as msprobe compare does and "
      "walks the APIs in execution order to the first one whose output diverges. Says whether that API's inputs "
      "already differed (\"inputs equal, output differs\" names the operator itself), gives both sides' values, the "
      "next divergent APIs, the in-place CRC noise msprobe dumps carry, the call stack, the first user-code frame "
      "mapped to a local file, the source line, and the git hunk between baseline_ref and candidate_ref that "
      "changed it. Writes hunt/hunt.json to the report directory, and with compare_table: true also "
      "hunt/compare_table.csv (msprobe's column layout), after sending the answer as progress. With run_msprobe it runs the real `msprobe compare` on "
      "the two dumps (msprobe on PATH, or msprobe_python -m msprobe.msprobe) and analyses msprobe's own result. "
      "With noise_dumps (the baseline dumped again) each row is judged against its own run-to-run spread "
      "(criterion calibrated: beyond safety_factor x the largest deviation the repeats showed there).";
  tool.spec.input_schema = MsprobeFirstDiffInputSchema();
  tool.spec.output_schema = MsprobeFirstDiffOutputSchema();
  tool.spec.annotations.read_only = false;  // writes its report files, never the user's tree
  tool.spec.annotations.destructive = false;
  tool.spec.annotations.idempotent = false;  // each call appends a ledger entry
  tool.spec.annotations.open_world = false;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
