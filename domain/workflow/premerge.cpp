#include "domain/workflow/premerge.h"

#include <algorithm>

#include "domain/workflow/config_names.h"
#include "domain/workflow/config_registry.h"
#include "domain/workflow/fan_out.h"
#include "domain/workflow/matrix.h"
#include "domain/workflow/run_worktrees.h"
#include "domain/workflow/tensorboard_run.h"

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

struct Worktrees {
  std::string baseline, candidate;
};

class Pipeline {
 public:
  Pipeline(const PremergeConfig& c, const PremergeOptions& o, StepRunner& r, PipelineObserver& obs)
      : c_(c), yes_(o.assume_yes), run_(r), obs_(obs) {}

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

    obs_.Step(5, kSteps, "Steps 3-4: training (" + std::to_string(matrix.size()) + " config(s) x 3 runs)");
    PARITY_RETURN_IF_ERROR(Train(matrix, wt));

    obs_.Step(6, kSteps, "Step 5: comparison");
    for (const auto& entry : matrix) PARITY_RETURN_IF_ERROR(Compare(entry));
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
      for (const auto& name : proposal.configs) matrix.push_back({name, {}});
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

  json RunArgs(const MatrixEntry& entry, const std::string& phase, const std::string& worktree,
               const std::string& side = "") {
    json args = Common(c_);
    args.update({{"action", "start"}, {"phase", phase}, {"worktree", worktree}, {"config", entry.name}});
    // Runs side by side share the candidate worktree: each gets its own output folder, so
    // no run clears or moves another's checkpoint folder.
    // Started back to back, they are not probed one by one (a probe imports torch: seconds
    // per start, and the runs would no longer overlap); Step 1's probe of this host, where
    // each run is started, is the fingerprint in the ledger.
    if (c_.max_parallel > 1) {
      args["dump_folder"] = "outputs/parity_" + (side.empty() ? phase : side) + "_" + entry.name;
      args["probe_env"] = false;
    }
    if (c_.model) args["model"] = *c_.model;
    if (c_.launcher) args["launcher"] = *c_.launcher;
    if (c_.script) args["script"] = *c_.script;
    if (c_.dataset_path) args["dataset_path"] = *c_.dataset_path;
    if (!c_.env.empty()) args["env"] = c_.env;
    if (c_.timeout_s > 0) args["timeout_s"] = c_.timeout_s;
    if (c_.executor != "local") args["executor"] = c_.executor;
    std::vector<std::string> extra = entry.extra_args;
    if (c_.tokenizer) extra.push_back("--model.tokenizer_path=" + *c_.tokenizer);
    if (!extra.empty()) args["extra_args"] = extra;
    return args;
  }

  // How a premerge run whose trainer writes no TensorBoard goes on.
  static constexpr const char* kNoTensorBoardHint =
      "Make the trainer write TensorBoard (the tensorboard package in its interpreter), or set \"tensorboard\": "
      "false in premerge.json to compare the printed values knowingly";

  // Every config's initial checkpoint, then its baseline and candidate runs (which load
  // it), through the fan-out: one after another locally, side by side on a scheduler.
  Status Train(const std::vector<MatrixEntry>& matrix, const Worktrees& wt) {
    struct Slot {
      std::string config, side;  // side empty: the initial checkpoint
      fs::path tb_dir;
    };
    std::vector<PlannedRun> plan;
    std::vector<Slot> slots;
    for (const auto& entry : matrix) {
      obs_.Note(entry.name + ": initial checkpoint (1 step, HF format) in the candidate worktree");
      size_t ckpt = plan.size();
      json gen = RunArgs(entry, "gen_ckpt", wt.candidate);
      // The one-step checkpoint run asks for TensorBoard too, so a trainer that cannot
      // write it is named as such before its baseline and candidate runs are judged.
      const fs::path gen_tb = TensorBoardDir("gen_ckpt", entry.name);
      if (c_.tensorboard) {
        std::vector<std::string> extra = gen.value("extra_args", std::vector<std::string>{});
        for (auto& flag : TensorBoardFlags(gen_tb)) extra.push_back(flag);
        gen["extra_args"] = extra;
      }
      plan.push_back({entry.name + " initial checkpoint", gen, std::nullopt});
      slots.push_back({entry.name, "", gen_tb});
      for (const auto& [side, worktree] : {std::pair{"baseline", wt.baseline}, std::pair{"candidate", wt.candidate}}) {
        json args = RunArgs(entry, "train", worktree, side);
        args["side"] = side;
        args["steps"] = c_.steps;
        obs_.Note(entry.name + ": " + side + " run, " + std::to_string(c_.steps) + " steps");
        fs::path tb_dir = TensorBoardDir(side, entry.name);
        if (c_.tensorboard) {
          std::vector<std::string> extra = args.value("extra_args", std::vector<std::string>{});
          for (auto& flag : TensorBoardFlags(tb_dir)) extra.push_back(flag);
          args["extra_args"] = extra;
        }
        plan.push_back({entry.name + " " + side, args, ckpt});
        slots.push_back({entry.name, side, tb_dir});
      }
    }
    if (!plan.empty()) PARITY_RETURN_IF_ERROR(ShowPlan(plan.front()));
    FanOutOptions options;
    options.max_parallel = static_cast<size_t>(c_.max_parallel);
    options.stop_at_first_failure = c_.stop_at_first_failure;
    options.poll_interval_s = 0.5;
    PARITY_ASSIGN_OR_RETURN(std::vector<RunOutcome> outcomes, FanOut(plan, options, run_, obs_));
    PARITY_RETURN_IF_ERROR(FanOutFailure(plan, outcomes));
    for (size_t i = 0; i < plan.size(); ++i) {
      const Slot& slot = slots[i];
      const json& job = outcomes[i].job;
      if (!job.value("slurm", json()).is_null()) out_.jobs.push_back(job["slurm"].value("job_id", ""));
      std::string log = job.value("log_path", "");
      if (log.empty()) log = (c_.report_dir / job.value("log", "")).string();
      if (slot.side.empty()) {
        obs_.Note(slot.config + ": checkpoint " + job.value("checkpoint", "?"));
        if (c_.tensorboard && !NewestEventFile(slot.tb_dir).ok()) {
          return NoTensorBoardEvents(slot.config + ": the initial-checkpoint run", slot.tb_dir, log, kNoTensorBoardHint);
        }
        continue;
      }
      logs_[slot.config][slot.side] = log;
      obs_.Note(slot.config + ": " + slot.side + " " + job.value("message", "ok") + " (" + log + ")");
      if (c_.tensorboard) {
        auto events = NewestEventFile(slot.tb_dir);
        if (!events.ok()) {
          return NoTensorBoardEvents(slot.config + ": the " + slot.side + " run", slot.tb_dir, log, kNoTensorBoardHint);
        }
        events_[slot.config][slot.side] = events->string();
      }
    }
    return Status::Ok();
  }

  // What the first run will be, shown before anything is submitted: its batch script
  // when the executor writes one (each run's own is recorded in its job directory).
  Status ShowPlan(const PlannedRun& first) {
    json args = first.args;
    args["action"] = "plan";
    PARITY_ASSIGN_OR_RETURN(json planned, Call("run_training", args));
    const json& plan = planned.value("plan", json::object());
    if (plan.contains("batch_script") && plan["batch_script"].is_string()) {
      obs_.Note("batch script of " + first.label + " (from " + plan.value("settings_file", "the user's settings") +
                "; every run's is recorded in jobs/<id>/batch.sh):\n" + plan["batch_script"].get<std::string>());
    }
    return Status::Ok();
  }

  // Full-precision values: the printed digits of a torchtitan log (loss 5, grad_norm 4
  // decimals) cannot decide 1e-5, so the runs also write TensorBoard into the report directory.
  fs::path TensorBoardDir(const std::string& side, const std::string& config) const {
    return c_.report_dir / "tb" / (side + "_" + config);
  }

  // Step 5b: the run logs must hold no error (错误上报原则), whatever file is compared.
  Status ValidateLogs(const MatrixEntry& entry) {
    json args = {{"paths", {logs_[entry.name]["baseline"], logs_[entry.name]["candidate"]}}};
    PARITY_ASSIGN_OR_RETURN(json parsed, Call("parse_log", args));
    for (const auto& f : parsed.value("files", json::array())) {
      for (const auto& w : f.value("warnings", json::array())) {
        std::string line = entry.name + ": " + f.value("path", "?") + ": " + (w.is_string() ? w.get<std::string>() : w.dump());
        obs_.Note("log warning " + line);
        out_.warnings.push_back(line);
      }
      if (f.value("errors_total", 0) > 0) {
        return FailedPrecondition("Step 5b: " + f.value("path", "?") + " holds " + std::to_string(f.value("errors_total", 0)) +
                                  " error line(s)")
            .WithEvidence("errors", f.value("errors", json::array()).dump(2));
      }
    }
    return Status::Ok();
  }

  Status Compare(const MatrixEntry& entry) {
    PARITY_RETURN_IF_ERROR(ValidateLogs(entry));
    auto& compared_files = c_.tensorboard ? events_ : logs_;
    json args = Common(c_);
    args.update({{"baseline", compared_files[entry.name]["baseline"]}, {"candidate", compared_files[entry.name]["candidate"]},
                 {"preset", c_.preset}, {"case", entry.name}});
    if (c_.bitwise) args["bitwise"] = true;
    if (c_.tolerance_abs) args["tolerance"] = {{"abs", *c_.tolerance_abs}};
    PARITY_ASSIGN_OR_RETURN(json compared, Call("compare_logs", args));
    CaseVerdict v{entry.name, compared.value("verdict", "INCONCLUSIVE"), compared.value("verdict_reason", ""),
                  (c_.report_dir / entry.name / "report.json").string()};
    obs_.Note(entry.name + ": " + v.verdict + " — " + v.reason);
    out_.cases.push_back(std::move(v));
    return Status::Ok();
  }

  Status Report(const std::vector<MatrixEntry>& matrix) {
    json args = Common(c_);
    std::vector<std::string> cases;
    for (const auto& e : matrix) cases.push_back(e.name);
    args.update({{"cases", cases}, {"language", c_.language}});
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
  std::map<std::string, std::map<std::string, std::string>> logs_;    // config -> side -> log path
  std::map<std::string, std::map<std::string, std::string>> events_;  // config -> side -> TensorBoard file
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

}  // namespace parity::workflow
