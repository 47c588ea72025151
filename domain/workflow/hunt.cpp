#include "domain/workflow/hunt.h"
#include "support/json_document.h"
#include "support/safe_file.h"

#include <fstream>
#include <sstream>

#include "domain/ledger/ledger.h"
#include "domain/workflow/config_names.h"
#include "domain/workflow/config_registry.h"
#include "domain/workflow/hunt_loop.h"
#include "domain/workflow/hunt_remote.h"
#include "domain/workflow/run_worktrees.h"
#include "domain/workflow/tensorboard_run.h"
#include "support/subprocess.h"

namespace parity::workflow::hunt_internal {

namespace {

constexpr size_t kSteps = 7;

Result<json> ReadJson(const fs::path& root, const fs::path& relative) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileUnder(root, relative, 256u << 20));
  return ParseJsonDocument(text, (root / relative).string());
}

}  // namespace

std::string Rel(const fs::path& file, const fs::path& root) {
  return fs::path(file).lexically_normal().lexically_relative(root.lexically_normal()).generic_string();
}

Result<HuntOutcome> Hunt::Run() {
  Result<HuntOutcome> result = Body();
  // Probes never outlive the hunt, whatever happened (error, cancel, a refused step).
  Status reverted = RevertAll();
  if (!result.ok()) {
    Status s = std::move(result).take_status();
    if (!reverted.ok()) s.WithEvidence("revert", reverted.ToString());
    // A failed hunt leaves nothing in the way of the next one, unless the user keeps it.
    for (const std::string& line : Cleanup()) s = AddToHint(std::move(s), line);
    return s;
  }
  if (!reverted.ok()) return reverted;
  return result;
}

Result<json> Hunt::Call(const std::string& tool, json args) {
  if (o_.cancel.cancelled()) return Cancelled("parity hunt was cancelled before " + tool);
  args["report_dir"] = o_.report_dir.string();
  auto r = run_.Call(tool, args);
  if (!r.ok()) return std::move(r).take_status().Context(tool);
  return r;
}

Result<HuntOutcome> Hunt::Body() {
  obs_.Step(1, kSteps, "configuration and repository");
  PARITY_RETURN_IF_ERROR(CheckConfig());
  PARITY_RETURN_IF_ERROR(ResolveSources());
  out_.baseline_commit = base_.source.commit;
  out_.candidate_commit = cand_.source.commit;
  obs_.Note("baseline " + base_.source.commit.substr(0, 12) + ", test " + cand_.source.commit.substr(0, 12) +
            (shadow_ ? " (shadow repository " + repo_.repo.string() + ")" : " in " + repo_.repo.string()));
  if (base_.source.commit == cand_.source.commit) {
    Warn("baseline and test are the same commit " + repo_.baseline_commit.substr(0, 12) +
         ": only the test tree's uncommitted files can differ");
  }

  PARITY_RETURN_IF_ERROR(CheckNamesRegistered());

  obs_.Step(2, kSteps, "isolated worktrees (audit_workspace)");
  PARITY_RETURN_IF_ERROR(Worktrees());
  for (Side* s : {&base_, &cand_}) PARITY_RETURN_IF_ERROR(PrepareSide(*s));
  // Full precision where the trainer offers it: torchtitan prints too few digits to decide
  // bitwise equality. The config's own log_path or keywords mean its log is what counts.
  tensorboard_ = c_.log_keywords.empty() && !base_.log_path && !cand_.log_path && !base_.metrics_file &&
                 TakesTorchtitanFlags(base_.argv) && TakesTorchtitanFlags(cand_.argv);
  hunt_["metrics_from"] = base_.metrics_file ? "metrics_file" : tensorboard_ ? "tensorboard" : "log";
  if (base_.metrics_file) obs_.Note("loss and grad norm from the trainer's metrics files (" + base_.metrics_file->string() +
                                    ", " + cand_.metrics_file->string() + "), copied to " +
                                    (o_.report_dir / "hunt" / "metrics").string());
  if (tensorboard_) obs_.Note("loss and grad norm from TensorBoard events (full precision) under " +
                              (o_.report_dir / "tb").string());

  obs_.Step(3, kSteps, "baseline and test runs (run_training)");
  for (Side* s : {&base_, &cand_}) {
    auto flag = StepsFlagOf(*s);
    PARITY_ASSIGN_OR_RETURN(s->run0, RunSide(*s, kCase, s->argv, flag ? std::optional<int>(flag->value) : std::nullopt));
  }

  obs_.Step(4, kSteps, "loss and grad norm (compare_logs)");
  PARITY_ASSIGN_OR_RETURN(json compared, CompareLogs(base_.run0.metrics(), cand_.run0.metrics(), kCase, false));
  std::string log_verdict = compared.value("verdict", "INCONCLUSIVE");
  hunt_["compare"] = {{"case", kCase}, {"verdict", log_verdict}, {"reason", compared.value("verdict_reason", "")},
                      {"report", compared.value("report", "")}, {"metrics", MetricFigures(compared)}};
  obs_.Note("logs: " + log_verdict + " — " + compared.value("verdict_reason", ""));
  if (log_verdict == "PASS") {
    Conclude(kHuntNoDivergence, LogsWithinTolerance(compared));
    return Finish();
  }

  obs_.Step(5, kSteps, "first divergent operator (msprobe_first_diff)");
  PARITY_RETURN_IF_ERROR(FirstDiff(log_verdict));
  if (!out_.verdict.empty()) return Finish();

  obs_.Step(6, kSteps, "probes at the divergent line (inject_prints, reruns, compare_logs)");
  PARITY_RETURN_IF_ERROR(Iterate());
  return Finish();
}

Status Hunt::CheckConfig() {
  if (c_.baseline_data_dir.empty() || c_.test_data_dir.empty()) {
    return InvalidArgument(c_.name + ".msprobe." + (c_.baseline_data_dir.empty() ? "baseline_data_dir" : "test_data_dir") +
                           ": required by parity hunt (where that side's run_script makes msprobe dump its data)")
        .WithHint("enable msprobe's dump in the training (PrecisionDebugger, or the toy trainer's --dump.dir) and "
                  "give the dump folders");
  }
  hunt_["config"] = Redacted(c_);
  hunt_["tolerance"] = c_.tolerance;
  hunt_["max_iterations"] = c_.max_iterations;
  return Status::Ok();
}

Status Hunt::CheckNamesRegistered() {
  for (Side* s : {&base_, &cand_}) {
    const std::string where = c_.name + "." + s->key + ".run_script";
    PARITY_ASSIGN_OR_RETURN(RunScript script, ParseRunScript(s->config->run_script, where));
    ChosenNames names = NamesInCommand(script.argv, script.env);
    if (!names.any()) continue;
    if (names.config_file) {  // a path into code_path is the same file of the commit
      const std::string code = s->remote() ? s->config->code_path : fs::absolute(s->config->code_path).string();
      fs::path in_tree = MapIntoWorktree(*names.config_file, code, "/");
      if (in_tree != fs::path(*names.config_file)) names.config_file = in_tree.lexically_relative("/").string();
    }
    const std::string commit = s == &base_ ? repo_.baseline_commit : repo_.candidate_commit;
    PARITY_ASSIGN_OR_RETURN(TreeRegistry registry, ReadTreeRegistry(repo_.repo, commit));
    Status checked = CheckNames(names, where, registry, "the " + s->key + " commit " + commit.substr(0, 12));
    if (checked.ok()) {
      obs_.Note(s->key + ": " + (names.config ? "config " + *names.config : "job file " + names.config_file.value_or("")) +
                " registered in its commit");
      continue;
    }
    if (!IsNoRegistry(checked)) return checked;
    if (!o_.assume_yes) {
      return AddToHint(std::move(checked), "run again with --yes to run it unchecked; nothing was created or run");
    }
    Warn(checked.message() + "; going on (--yes)");
  }
  return Status::Ok();
}

void Hunt::Warn(const std::string& line) {
  obs_.Note("warning: " + line);
  out_.warnings.push_back(line);
}

void Hunt::Conclude(const std::string& verdict, const std::string& explanation) {
  out_.verdict = verdict;
  out_.explanation = explanation;
}

Result<HuntOutcome> Hunt::Finish() {
  obs_.Step(7, kSteps, "report (hunt/hunt.json, render_report)");
  obs_.Note("verdict: " + out_.verdict + " — " + out_.explanation);
  out_.located = located_.empty() ? json() : located_;
  hunt_["verdict"] = out_.verdict;
  hunt_["explanation"] = out_.explanation;
  hunt_["located"] = out_.located;
  hunt_["iterations"] = iterations_;
  hunt_["restored"] = reverted_;
  hunt_["warnings"] = out_.warnings;
  fs::path path = o_.report_dir / "hunt" / "hunt.json";
  json doc;
  if (first_diff_.is_object()) {
    auto written = ReadJson(o_.report_dir, "hunt/hunt.json");  // msprobe_first_diff's, extended below
    if (!written.ok()) return std::move(written).take_status().Context("reading msprobe_first_diff's hunt.json");
    doc = *written;
  }
  if (!doc.is_object()) {
    doc = {{"schema", "parity.hunt/1"}, {"found", false}, {"first_divergence", nullptr},
           {"explanation", out_.explanation}};
  }
  doc["hunt"] = hunt_;
  PARITY_RETURN_IF_ERROR(WriteFileUnder(o_.report_dir, "hunt/hunt.json", doc.dump(2) + "\n"));
  out_.hunt = hunt_;

  json args = {{"cases", {kCase}}, {"language", o_.language}};
  PARITY_ASSIGN_OR_RETURN(out_.report, Call("render_report", args));
  const json& outputs = out_.report.value("outputs", json::object());
  for (const char* key : {"html", "pdf"}) {
    if (outputs.contains(key) && outputs[key].is_string()) obs_.Note(std::string(key) + ": " + outputs[key].get<std::string>());
  }
  RecordInLedger(path);
  (void)Cleanup();  // what could not be removed is in the warnings
  return out_;
}

void Hunt::RecordInLedger(const fs::path& hunt_path) {
  ledger::Entry e;
  e.tool = "parity hunt";
  e.action = "hunt";
  e.side = "both";
  e.git = {{"repo", repo_.repo.string()}, {"commit", out_.candidate_commit}, {"baseline_commit", out_.baseline_commit}};
  if (shadow_) e.git["shadow"] = hunt_["shadow"];
  if (hunt_.contains("remote_worktrees")) e.git["remote_worktrees"] = hunt_["remote_worktrees"];
  e.inputs = {{"config", Redacted(c_)}};
  e.outputs = {{"hunt", Rel(hunt_path, o_.report_dir)}};
  e.outcome = {{"status", "ok"}, {"verdict", out_.verdict}, {"message", out_.explanation}};
  auto id = ledger::Append(o_.report_dir, e);
  if (!id.ok()) Warn("the hunt's ledger entry could not be written: " + id.status().ToString());
}

std::vector<std::string> Hunt::Cleanup() {
  std::vector<std::string> said;
  // Also after a cancel (SIGINT): removing parity's own worktrees is quick and is what
  // leaves the next run a clear way, so it does not stop at the cancelled token.
  const CancellationToken uncancelled;
  if (wt_created_) {
    auto cleanup = [&](json args) {
      args["report_dir"] = o_.report_dir.string();
      auto r = run_.Call("audit_workspace", args);
      if (!r.ok()) return Result<json>(std::move(r).take_status().Context("audit_workspace"));
      return r;
    };
    WorktreesOutcome wt = RemoveRunWorktrees(cleanup, repo_.repo, {base_.worktree.string(), cand_.worktree.string()},
                                             o_.keep_worktrees ? std::optional<std::string>("--keep-worktrees")
                                                               : std::nullopt,
                                             o_.report_dir);
    if (wt.removed) wt_created_ = false;
    if (wt.removed || o_.keep_worktrees) obs_.Note(wt.sentence);
    else Warn(wt.sentence);
    said.push_back(wt.sentence);
  }
  for (Side* s : {&base_, &cand_}) {
    if (!s->remote_created) continue;
    const std::string command =
        "`" + ShellQuote({"git", "-C", s->source.top, "worktree", "remove", "--force", s->remote_worktree}) + "` on " +
        s->host->Describe();
    if (o_.keep_worktrees) {
      said.push_back("the remote worktree " + s->Where() + " is kept (--keep-worktrees); remove it with " + command);
      obs_.Note(said.back());
      continue;
    }
    Status removed = RemoveRemoteWorktree(*s->host, s->source.top, s->remote_worktree, uncancelled);
    if (removed.ok()) {
      s->remote_created = false;
      said.push_back("the remote worktree " + s->Where() + " was removed");
      obs_.Note(said.back());
    } else {
      said.push_back("the remote worktree " + s->Where() + " is kept: removing it failed (" + removed.message() +
                     "); remove it with " + command);
      Warn(said.back());
    }
  }
  return said;
}

}  // namespace parity::workflow::hunt_internal

namespace parity::workflow {

Result<HuntOutcome> RunHunt(const ComparerConfig& config, const HuntOptions& options, StepRunner& runner,
                            PipelineObserver& observer) {
  return hunt_internal::Hunt(config, options, runner, observer).Run();
}

int HuntExitCode(const Result<HuntOutcome>& outcome) {
  if (!outcome.ok()) return 2;
  if (outcome->verdict == kHuntNoDivergence) return 0;
  if (outcome->verdict == kHuntOperator || outcome->verdict == kHuntProbe || outcome->verdict == kHuntArgument) return 1;
  return 2;
}

nlohmann::json HuntOutcomeJson(const HuntOutcome& o) {
  using nlohmann::json;
  return {{"verdict", o.verdict},
          {"explanation", o.explanation},
          {"located", o.located},
          {"baseline_commit", o.baseline_commit},
          {"candidate_commit", o.candidate_commit},
          {"iterations", o.hunt.value("iterations", json::array()).size()},
          {"outputs", o.report.value("outputs", json::object())},
          {"warnings", o.warnings}};
}

}  // namespace parity::workflow
