#include "domain/workflow/premerge.h"

#include <algorithm>

#include "domain/workflow/config_names.h"
#include "domain/workflow/config_registry.h"
#include "domain/workflow/matrix.h"
#include "domain/workflow/premerge_runs.h"
#include "domain/workflow/run_worktrees.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kSteps = 8;

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// What an unanswered confirmation stops with.
Status NeedsConsent(const std::string& what, const std::string& how, const json& found) {
  return FailedPrecondition(what + " needs the user's confirmation, and the config does not give it; nothing was "
                                   "created or run")
      .WithHint(how + ", or run with --yes to accept parity's proposal")
      .WithEvidence("found", found.dump(2));
}

json Common(const PremergeConfig& c) { return {{"report_dir", c.report_dir.string()}}; }

class Pipeline {
 public:
  Pipeline(const PremergeConfig& c, const PremergeOptions& o, StepRunner& r, PipelineObserver& obs)
      : c_(c), yes_(o.assume_yes), run_(r), obs_(obs), cases_(c, o, r, obs, out_) {}

  Result<PremergeOutcome> Run() {
    Result<PremergeOutcome> result = Body();
    if (result.ok() || !wt_) return result;
    // A failed run leaves nothing in the way of the next one (unless the user keeps it).
    WorktreesOutcome wt = RemoveWorktrees();
    obs_.Note(wt.sentence);
    Status s = AddToHint(std::move(result).take_status(), wt.sentence);
    if (!wt.removed) s.WithEvidence("kept_worktrees", json({wt_->baseline, wt_->candidate}).dump());
    return s;
  }

 private:
  WorktreesOutcome RemoveWorktrees() {
    auto cleanup = [&](const json& args) {
      json with_report = Common(c_);
      with_report.update(args);
      return Call("audit_workspace", with_report);
    };
    return RemoveRunWorktrees(cleanup,
                              c_.repo, {wt_->baseline, wt_->candidate},
                              c_.cleanup ? std::nullopt : std::optional<std::string>("the config says \"cleanup\": false"),
                              c_.report_dir);
  }

  Result<PremergeOutcome> Body() {
    if (!c_.mail.is_null() && !c_.confirm.mail && !yes_) {
      return NeedsConsent("Step 7 (mail)", "set confirm.mail to true", c_.mail);
    }
    obs_.Step(1, kSteps, "Step 0: workspace audit and diff " + c_.baseline + ".." + c_.candidate);
    PARITY_ASSIGN_OR_RETURN(json diff, AuditAndDiff());
    PARITY_ASSIGN_OR_RETURN(auto classes, Classes(diff));

    obs_.Step(2, kSteps, "Step 1: environment");
    PARITY_RETURN_IF_ERROR(Probe());

    obs_.Step(3, kSteps, "Step 2: config matrix");
    PARITY_ASSIGN_OR_RETURN(auto matrix, Matrix(diff));

    obs_.Step(4, kSteps, "Step 0: isolated worktrees");
    PARITY_ASSIGN_OR_RETURN(Worktrees wt, Prepare(classes));
    wt_ = wt;

    const int baseline_runs = c_.noise.repeats > 0 ? c_.noise.repeats : 2;
    obs_.Step(5, kSteps, "Steps 3-4: training (" + std::to_string(matrix.size()) + " config(s): checkpoint, " +
                             std::to_string(baseline_runs) + " baseline runs (gate 1), candidate)");
    BaselineSource source{c_.repo.string(), out_.baseline_commit, classes};
    PARITY_RETURN_IF_ERROR(cases_.Train(matrix, wt, source));

    obs_.Step(6, kSteps, "Step 5: comparison (gate 1, then the candidate)");
    for (const auto& entry : matrix) PARITY_RETURN_IF_ERROR(cases_.Compare(entry));
    out_.verdict = CombineVerdicts(out_.cases);

    obs_.Step(7, kSteps, c_.mail.is_null() ? "Step 6: report" : "Steps 6-7: report and mail");
    PARITY_RETURN_IF_ERROR(Report(matrix));

    obs_.Step(8, kSteps, c_.cleanup ? "Step 8: cleanup" : "Step 8: cleanup skipped (cleanup: false)");
    WorktreesOutcome removed = RemoveWorktrees();
    obs_.Note(removed.sentence);
    if (!removed.removed) out_.warnings.push_back(removed.sentence);
    wt_.reset();
    return out_;
  }

  Result<json> Call(const std::string& tool, const json& args) {
    auto r = run_.Call(tool, args);
    if (!r.ok()) return std::move(r).take_status().Context(tool);
    return r;
  }

  Result<json> AuditAndDiff() {
    json args = Common(c_);
    args.update({{"action", "audit"}, {"repo", c_.repo.string()}, {"baseline", c_.baseline}});
    PARITY_ASSIGN_OR_RETURN(json audit, Call("audit_workspace", args));
    const json& base = audit["audit"]["baseline"];
    if (base.is_object() && !base.value("ok", false)) {
      Status s = FailedPrecondition("baseline " + c_.baseline + ": " + base.value("error", "cannot be resolved"));
      if (!base.value("hint", "").empty()) s.WithHint(base.value("hint", ""));
      return s.WithEvidence("stale_fork", audit["audit"].value("stale_fork", json::array()).dump(2));
    }
    for (const auto& fork : audit["audit"].value("stale_fork", json::array())) {
      if (fork.value("diverged", false)) {
        std::string line = "stale-fork check: " + fork.value("branch", "?") + " differs across remotes (newest " +
                           fork.value("newest", "?") + "); baseline is " + c_.baseline;
        obs_.Note(line);
        out_.warnings.push_back(line);
      }
    }
    args["action"] = "diff";
    args["candidate"] = c_.candidate;
    PARITY_ASSIGN_OR_RETURN(json diff, Call("audit_workspace", args));
    out_.baseline_commit = diff["diff"]["baseline"].value("commit", "");
    out_.candidate_commit = diff["diff"]["candidate"].value("commit", "");
    for (const auto& w : diff["diff"].value("warnings", json::array())) {
      obs_.Note("diff: " + w.get<std::string>());
      out_.warnings.push_back(w.get<std::string>());
    }
    obs_.Note(c_.baseline + " " + out_.baseline_commit.substr(0, 12) + " .. " + c_.candidate + " " +
              out_.candidate_commit.substr(0, 12) + ": " + std::to_string(diff["diff"]["files"].size()) +
              " changed file(s)");
    return diff["diff"];
  }

  Result<std::map<std::string, std::string>> Classes(const json& diff) {
    std::map<std::string, std::string> chosen;
    json unconfirmed = json::array();
    for (const auto& f : diff["files"]) {
      std::string path = f["path"];
      if (c_.confirm.classes && c_.confirm.classes->count(path)) {
        chosen[path] = c_.confirm.classes->at(path);
      } else {
        chosen[path] = f["proposed"];
        unconfirmed.push_back({{"path", path}, {"proposed", f["proposed"]}, {"reason", f.value("reason", "")},
                               {"allowed", f["allowed"]}});
      }
    }
    if (!unconfirmed.empty() && !c_.confirm.classes_proposed && !yes_) {
      return NeedsConsent("Step 0 (the A/B/C class of every changed file)",
                          "set confirm.classes to {\"<path>\": \"A|B|C|ignore\"} for the files listed, or to "
                          "\"proposed\"",
                          unconfirmed);
    }
    for (const auto& [path, cls] : chosen) obs_.Note("class " + cls + ": " + path);
    return chosen;
  }

  Status Probe() {
    PARITY_ASSIGN_OR_RETURN(json env, Call("probe_env", Common(c_)));
    const json& anomalies = env["anomalies"];
    for (const auto& a : anomalies) {
      std::string line = "environment anomaly " + a.value("code", "?") + ": " + a.value("message", "");
      obs_.Note(line);
      out_.warnings.push_back(line);
    }
    if (!anomalies.empty() && !c_.confirm.environment_anomalies && !yes_) {
      return NeedsConsent("Step 1 (" + std::to_string(anomalies.size()) + " environment anomal" +
                              (anomalies.size() == 1 ? "y" : "ies") + ")",
                          "set confirm.environment_anomalies to true once the user has judged them", anomalies);
    }
    return Status::Ok();
  }

  Result<std::vector<MatrixEntry>> Matrix(const json& diff) {
    std::vector<std::string> files;
    for (const auto& f : diff["files"]) files.push_back(f["path"]);
    // What both commits register, read through git (not the user's working tree).
    PARITY_ASSIGN_OR_RETURN(TreeRegistry base_reg, ReadTreeRegistry(c_.repo, out_.baseline_commit));
    PARITY_ASSIGN_OR_RETURN(TreeRegistry cand_reg, ReadTreeRegistry(c_.repo, out_.candidate_commit));
    std::vector<std::string> registered = cand_reg.ConfigsOf(c_.model.value_or(""));
    if (!cand_reg.sources.empty()) obs_.Note("registries in the candidate: " + Join(cand_reg.sources));
    MatrixProposal proposal = ProposeMatrix(files, registered);
    for (const auto& a : proposal.axes) {
      if (a.touched) obs_.Note("axis " + a.title + " touched by " + Join(a.files));
    }
    for (const auto& n : proposal.notes) obs_.Note("matrix: " + n);
    std::vector<MatrixEntry> matrix = c_.configs;
    if (matrix.empty()) {
      if (!c_.confirm.config_matrix && !yes_) {
        return NeedsConsent("Step 2 (the config matrix)", "list the configs in `configs`, or set confirm.config_matrix",
                            ToJson(proposal));
      }
      if (proposal.configs.empty()) {
        return FailedPrecondition("Step 2: no registered config found to propose a matrix")
            .WithHint("name the configs in `configs`");
      }
      for (const auto& name : proposal.configs) matrix.push_back({name, {}, std::nullopt});
    }
    for (size_t i = 0; i < matrix.size(); ++i) {
      PARITY_RETURN_IF_ERROR(CheckEntry(matrix[i], i, base_reg, cand_reg));
      obs_.Note("config " + matrix[i].name + (matrix[i].extra_args.empty() ? "" : " with " + Join(matrix[i].extra_args)));
    }
    return matrix;
  }

  // The entry's model, config and job file exist in both commits, before anything is made.
  Status CheckEntry(const MatrixEntry& entry, size_t i, const TreeRegistry& base_reg, const TreeRegistry& cand_reg) {
    const std::string launcher = c_.launcher.value_or("torchtitan");
    ChosenNames names = NamesInCommand(entry.extra_args, c_.env);
    if (launcher == "torchtitan") {
      if (c_.model) names.model = *c_.model;
      names.config = entry.name;
    }
    if (!names.any()) return Status::Ok();
    const std::string where = "premerge.json configs[" + std::to_string(i) + "] (" + entry.name + ")";
    for (const auto& [reg, side] : {std::pair{&cand_reg, "the candidate " + out_.candidate_commit.substr(0, 12)},
                                    std::pair{&base_reg, "the baseline " + out_.baseline_commit.substr(0, 12)}}) {
      Status checked = CheckNames(names, where, *reg, side);
      if (checked.ok()) continue;
      if (!IsNoRegistry(checked)) return checked;
      if (!c_.confirm.unregistered_configs && !yes_) {
        return AddToHint(std::move(checked), "set confirm.unregistered_configs to true (or run with --yes) to run it "
                                             "unchecked; nothing was created or run");
      }
      Warn(checked.message() + "; going on as confirmed");
    }
    return Status::Ok();
  }

  void Warn(const std::string& line) {
    obs_.Note("warning: " + line);
    out_.warnings.push_back(line);
  }

  Result<Worktrees> Prepare(const std::map<std::string, std::string>& classes) {
    json args = Common(c_);
    args.update({{"action", "prepare"}, {"repo", c_.repo.string()}, {"baseline", c_.baseline},
                 {"candidate", c_.candidate}, {"classes", classes}});
    if (c_.baseline_path) args["baseline_path"] = *c_.baseline_path;
    if (c_.candidate_path) args["candidate_path"] = *c_.candidate_path;
    args["remove_stale"] = yes_ || c_.confirm.stale_worktrees;
    auto called = Call("audit_workspace", args);
    if (!called.ok() && IsStaleWorktreesRefusal(called.status())) {
      return StaleWorktreesNeedConsent(std::move(called).take_status(),
                                       "set confirm.stale_worktrees to true (or run with --yes)", c_.repo, c_.report_dir);
    }
    PARITY_ASSIGN_OR_RETURN(json prepared, std::move(called));
    for (const auto& r : prepared.value("prepare", json::object()).value("removed_stale", json::array())) {
      obs_.Note("removed the earlier run's worktree " + r.value("path", "?") + " (confirmed)");
    }
    Worktrees wt{prepared["prepare"]["baseline_worktree"].value("path", ""),
                 prepared["prepare"]["candidate_worktree"].value("path", "")};
    if (wt.baseline.empty() || wt.candidate.empty()) {
      return Internal("audit_workspace prepare returned no worktree paths").WithEvidence("result", prepared.dump());
    }
    obs_.Note("baseline worktree " + wt.baseline);
    obs_.Note("candidate worktree " + wt.candidate);
    return wt;
  }

  Status Report(const std::vector<MatrixEntry>& matrix) {
    json args = Common(c_);
    args.update({{"cases", cases_.ReportCases(matrix)}, {"language", c_.language}});
    if (c_.title) args["title"] = *c_.title;
    if (!c_.mail.is_null()) args["mail"] = c_.mail;
    PARITY_ASSIGN_OR_RETURN(out_.report, Call("render_report", args));
    const json& outputs = out_.report.value("outputs", json::object());
    for (const char* key : {"html", "pdf", "reproduce"}) {
      if (outputs.contains(key) && outputs[key].is_string()) obs_.Note(std::string(key) + ": " + outputs[key].get<std::string>());
    }
    return Status::Ok();
  }

  const PremergeConfig& c_;
  bool yes_;
  StepRunner& run_;
  PipelineObserver& obs_;
  PremergeOutcome out_;
  std::optional<Worktrees> wt_;  // made by this run and not yet removed
  CaseRunner cases_;  // steps 3-5 per config (premerge_runs.h)
};

}  // namespace

std::string CombineVerdicts(const std::vector<CaseVerdict>& cases) {
  if (cases.empty()) return "INCONCLUSIVE";
  auto any = [&](const char* v) { return std::any_of(cases.begin(), cases.end(), [&](const auto& c) { return c.verdict == v; }); };
  if (any("FAIL")) return "FAIL";
  if (any("PASS") && !any("INCONCLUSIVE") &&
      std::all_of(cases.begin(), cases.end(), [](const auto& c) { return c.verdict == "PASS"; })) {
    return "PASS";
  }
  return "INCONCLUSIVE";
}

Result<PremergeOutcome> RunPremerge(const PremergeConfig& config, const PremergeOptions& options, StepRunner& runner,
                                    PipelineObserver& observer) {
  return Pipeline(config, options, runner, observer).Run();
}

int PremergeExitCode(const Result<PremergeOutcome>& outcome) {
  if (!outcome.ok()) return 2;
  if (outcome->verdict == "PASS") return 0;
  if (outcome->verdict == "FAIL") return 1;
  return 2;
}

json PremergeOutcomeJson(const PremergeOutcome& o) {
  json cases = json::array();
  for (const auto& c : o.cases) {
    cases.push_back({{"config", c.config}, {"verdict", c.verdict}, {"reason", c.reason}, {"report_json", c.report_json}});
  }
  json determinism = json::array();
  for (const auto& d : o.determinism) {
    determinism.push_back({{"config", d.config}, {"gate1", d.gate1}, {"reason", d.reason}, {"report_json", d.report_json},
                           {"baseline_runs", d.baseline_runs}, {"from_cache", d.from_cache},
                           {"cache_key", d.cache_key.empty() ? json(nullptr) : json(d.cache_key)},
                           {"calibrated", d.calibrated}, {"environment", d.environment}});
  }
  return {{"verdict", o.verdict},
          {"cases", cases},
          {"determinism", determinism},
          {"baseline_commit", o.baseline_commit},
          {"candidate_commit", o.candidate_commit},
          {"outputs", o.report.value("outputs", json::object())},
          {"warnings", o.warnings},
          {"jobs", o.jobs}};
}

}  // namespace parity::workflow
