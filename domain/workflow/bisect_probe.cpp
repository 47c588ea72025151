#include "domain/workflow/bisect_probe.h"

#include <algorithm>
#include <optional>

#include "domain/run/jobs.h"
#include "domain/workflow/tensorboard_run.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

// A run_training error of a job that ran: its record on disk says how it ended (the tool's
// error result carries the same text, but no structure to tell it from a refusal).
std::optional<json> FailedJob(const fs::path& report_dir, const std::string& job_id) {
  if (job_id.empty()) return std::nullopt;
  auto view = run::JobStatus(report_dir, job_id);
  if (!view.ok()) return std::nullopt;
  std::string status = view->value("status", "");
  if (status == "failed" || status == "timeout" || status == "lost") return *view;
  return std::nullopt;
}

json StatusJson(const Status& status) {
  json evidence = json::object();
  for (const auto& e : status.evidence()) evidence[e.name] = e.value;
  return {{"kind", ErrorKindName(status.kind())}, {"message", status.message()}, {"hint", status.hint()},
          {"evidence", evidence}};
}

BisectProber::BisectProber(const PremergeConfig& config, MatrixEntry entry, fs::path top, StepRunner& runner,
                           PipelineObserver& observer, CancellationToken cancel, bool keep_worktrees)
    : config_(config), entry_(std::move(entry)), top_(std::move(top)), run_(runner), obs_(observer),
      cancel_(std::move(cancel)), keep_(keep_worktrees) {}

Result<json> BisectProber::Call(const std::string& tool, json args, const fs::path& report_dir) {
  if (cancel_.cancelled()) return Cancelled("parity bisect was cancelled before " + tool);
  if (!report_dir.empty()) args["report_dir"] = report_dir.string();
  auto r = run_.Call(tool, args);
  if (!r.ok()) return std::move(r).take_status().Context(tool);
  return r;
}

// Worktrees beside the repository and named after it (<repo>-bisect-<label>-...): parity's
// own place, like audit_workspace's defaults. Every changed file gets its class: committed
// ones are the probe's own (A), uncommitted ones the user's answer (C becomes ignore).
Result<BisectProber::Worktrees> BisectProber::Prepare(const std::string& commit, const std::string& label,
                                                      const fs::path& dir) {
  json args = {{"action", "diff"}, {"repo", top_.string()}, {"baseline", good_commit_}, {"candidate", commit}};
  PARITY_ASSIGN_OR_RETURN(json diff, Call("audit_workspace", args, dir));
  std::map<std::string, std::string> classes;
  for (const auto& f : diff["diff"]["files"]) {
    std::string path = f["path"];
    auto it = uncommitted_.find(path);
    std::string cls = f["proposed"];
    if (it != uncommitted_.end()) cls = it->second == "C" ? "ignore" : it->second;
    // A file committed in the whole range and also modified (answered A there) is only
    // uncommitted in a probe before that commit: there its uncommitted change is left out; a
    // class a file cannot have in this probe's diff falls back to ignore, else the proposal.
    const json allowed = f.value("allowed", json::array());
    auto is_allowed = [&](const std::string& c) { return std::find(allowed.begin(), allowed.end(), c) != allowed.end(); };
    if (!is_allowed(cls)) cls = is_allowed("ignore") ? "ignore" : f["proposed"].get<std::string>();
    classes[path] = cls;
  }
  const std::string base = top_.filename().empty() ? top_.parent_path().string() : top_.string();
  args = {{"action", "prepare"}, {"repo", top_.string()}, {"baseline", good_commit_}, {"candidate", commit},
          {"classes", classes}, {"baseline_path", base + "-bisect-" + label + "-good"},
          {"candidate_path", base + "-bisect-" + label}};
  PARITY_ASSIGN_OR_RETURN(json prepared, Call("audit_workspace", args, dir));
  Worktrees wt{prepared["prepare"]["baseline_worktree"].value("path", ""),
               prepared["prepare"]["candidate_worktree"].value("path", "")};
  if (wt.baseline.empty() || wt.candidate.empty()) {
    return Internal("audit_workspace prepare returned no worktree paths").WithEvidence("result", prepared.dump());
  }
  return wt;
}

json BisectProber::TrainArgs(const std::string& phase, const std::string& side, const std::string& worktree,
                             const fs::path& dir) const {
  json args = TrainingStartArgs(config_, entry_, phase, worktree);
  if (phase == "train") {
    args["side"] = side;
    args["steps"] = config_.steps;
    args["checkpoint_dir"] = checkpoint_;
  }
  std::vector<std::string> extra = args.value("extra_args", std::vector<std::string>{});
  if (phase == "train" && config_.tensorboard) {
    for (auto& flag : TensorBoardFlags(dir / "tb" / (side + "_" + entry_.name))) extra.push_back(flag);
  }
  if (!extra.empty()) args["extra_args"] = extra;
  return args;
}

Result<BisectProber::Metrics> BisectProber::MetricsFile(const json& job, const std::string& side, const fs::path& dir,
                                                         const std::string& worktree) {
  std::string log = job.value("log_path", "");
  if (log.empty()) log = (dir / job.value("log", "")).string();
  PARITY_ASSIGN_OR_RETURN(std::optional<Status> bad_log, CheckLog(log));
  if (bad_log) return Metrics{"", std::move(bad_log)};
  if (config_.metrics_file) {
    const fs::path copy = dir / "metrics" / (side + "_" + entry_.name + ".jsonl");
    Status moved = MoveMetricsFile(worktree, *config_.metrics_file, dir, copy, "the " + side + " run", log);
    if (!moved.ok()) return Metrics{"", std::move(moved)};
    return Metrics{copy.string(), std::nullopt};
  }
  if (!config_.tensorboard) return Metrics{log, std::nullopt};
  auto events = NewestEventFile(dir / "tb" / (side + "_" + entry_.name));
  if (!events.ok()) return Metrics{"", events.status()};
  return Metrics{events->string(), std::nullopt};
}

// The premerge's step 5b: a log holding error lines is no run to compare (the inner
// status); parse_log itself failing is an error.
Result<std::optional<Status>> BisectProber::CheckLog(const std::string& log) {
  PARITY_ASSIGN_OR_RETURN(json parsed, Call("parse_log", {{"paths", {log}}}, fs::path()));
  for (const auto& f : parsed.value("files", json::array())) {
    if (f.value("errors_total", 0) > 0) {
      return std::optional<Status>(FailedPrecondition(log + " holds " + std::to_string(f.value("errors_total", 0)) +
                                                      " error line(s)")
                                       .WithEvidence("errors", f.value("errors", json::array()).dump(2)));
    }
  }
  return std::optional<Status>();
}

void BisectProber::Cleanup(const Worktrees& wt, const fs::path& dir, std::vector<std::string>& warnings) {
  if (keep_) return;
  // Not through Call: the worktrees go even when the bisect was cancelled.
  json args = {{"action", "cleanup"}, {"repo", top_.string()}, {"paths", {wt.baseline, wt.candidate}}, {"force", true},
               {"report_dir", dir.string()}};
  auto done = run_.Call("audit_workspace", args);
  if (!done.ok()) warnings.push_back("the worktrees " + wt.candidate + " were not removed: " + done.status().ToString());
}

std::string BisectProber::NoteJob(const json& job) {
  const json slurm = job.is_object() ? job.value("slurm", json()) : json();
  if (!slurm.is_object()) return "";
  std::string id = slurm.value("job_id", "");
  if (!id.empty()) jobs_.push_back(id);
  return id;
}

Status BisectProber::RunGood(const std::string& good_commit) {
  good_commit_ = good_commit;
  const fs::path dir = good_dir();
  PARITY_ASSIGN_OR_RETURN(Worktrees wt, Prepare(good_commit, "good", dir));
  std::vector<std::string> warnings;
  auto body = [&]() -> Status {
    obs_.Note("good " + good_commit.substr(0, 12) + ": initial checkpoint (1 step) and the reference training");
    if (config_.metrics_file) {
      PARITY_RETURN_IF_ERROR(RefuseMetricsFileInTree(wt.baseline, *config_.metrics_file));
    }
    PARITY_ASSIGN_OR_RETURN(json ckpt, Call("run_training", TrainArgs("gen_ckpt", "", wt.baseline, dir), dir));
    ++trainings_;
    NoteJob(ckpt["job"]);
    // The checkpoint run's own file is not the reference run's: moved aside, so the next
    // run must write its own.
    if (config_.metrics_file) {
      PARITY_RETURN_IF_ERROR(MoveMetricsFile(wt.baseline, *config_.metrics_file, dir,
                                             dir / "metrics" / ("gen_ckpt_" + entry_.name + ".jsonl"),
                                             "the initial-checkpoint run", ckpt["job"].value("log_path", "")));
    }
    checkpoint_ = ckpt["job"].value("checkpoint", "");
    if (checkpoint_.empty()) checkpoint_ = (dir / ("initial_ckpt_" + entry_.name)).string();
    PARITY_ASSIGN_OR_RETURN(json run, Call("run_training", TrainArgs("train", "baseline", wt.baseline, dir), dir));
    ++trainings_;
    NoteJob(run["job"]);
    PARITY_ASSIGN_OR_RETURN(Metrics metrics, MetricsFile(run["job"], "baseline", dir, wt.baseline));
    if (metrics.unusable) return *metrics.unusable;
    good_metrics_ = metrics.file;
    return Status::Ok();
  };
  Status s = body();
  Cleanup(wt, dir, warnings);
  for (const auto& w : warnings) obs_.Note("warning: " + w);
  if (!s.ok()) return std::move(s).Context("the good commit " + good_commit.substr(0, 12) + " (" + dir.string() + ")");
  return Status::Ok();
}

Result<std::vector<ProbeResult>> BisectProber::Probe(const std::vector<ProbeRequest>& batch) {
  struct Slot {
    Worktrees wt;
    std::string job_id;
    std::optional<Status> failed;  // the training did not run through
    json job;
  };
  std::vector<Slot> slots(batch.size());
  std::vector<ProbeResult> out(batch.size());
  auto cleanup_all = [&] {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].wt.candidate.empty()) Cleanup(slots[i].wt, out[i].report_dir, out[i].warnings);
    }
  };
  // A stop: the batch's trainings still running are cancelled, its worktrees removed, and
  // what could not be undone is named in the error.
  auto stop = [&](Status s) -> Status {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].job_id.empty() || slots[i].job.value("status", "") != "running") continue;
      auto cancelled = run_.Call("run_training", {{"action", "cancel"}, {"job_id", slots[i].job_id},
                                                  {"report_dir", out[i].report_dir.string()}});
      if (!cancelled.ok()) out[i].warnings.push_back("job " + slots[i].job_id + " not cancelled: " + cancelled.status().message());
    }
    cleanup_all();
    std::string left;
    for (const auto& r : out) {
      for (const auto& w : r.warnings) left += w + "\n";
    }
    if (!left.empty()) s.WithEvidence("not_undone", left);
    return s;
  };
  for (size_t i = 0; i < batch.size(); ++i) {
    out[i].report_dir = config_.report_dir / "probes" / batch[i].label;
    auto wt = Prepare(batch[i].commit, batch[i].label, out[i].report_dir);
    if (!wt.ok()) return stop(std::move(wt).take_status().Context("probe " + batch[i].commit.substr(0, 12)));
    slots[i].wt = *wt;
    if (config_.metrics_file) {
      Status clean = RefuseMetricsFileInTree(wt->candidate, *config_.metrics_file);
      if (!clean.ok()) return stop(std::move(clean).Context("probe " + batch[i].commit.substr(0, 12)));
    }
  }
  // Start every training, then follow each: they run concurrently as supervised jobs.
  for (size_t i = 0; i < batch.size(); ++i) {
    json args = TrainArgs("train", "candidate", slots[i].wt.candidate, out[i].report_dir);
    args["wait"] = false;
    obs_.Note("probe " + batch[i].label + ": training " + std::to_string(config_.steps) + " steps");
    auto run = Call("run_training", args, out[i].report_dir);
    if (!run.ok()) return stop(std::move(run).take_status());
    ++trainings_;
    slots[i].job = (*run)["job"];
    slots[i].job_id = slots[i].job.value("id", "");
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    auto waited = Call("run_training", {{"action", "wait"}, {"job_id", slots[i].job_id}}, out[i].report_dir);
    if (waited.ok()) {
      slots[i].job = (*waited)["job"];
      continue;
    }
    auto failed = FailedJob(out[i].report_dir, slots[i].job_id);
    if (!failed) return stop(std::move(waited).take_status());
    slots[i].job = *failed;
    slots[i].failed = run::JobFailure(*failed);
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    ProbeResult& r = out[i];
    r.scheduler_job = NoteJob(slots[i].job);
    if (slots[i].failed) {
      r.verdict = ProbeVerdict::kSkip;
      r.reason = "does not run: " + slots[i].failed->message();
      r.evidence = StatusJson(*slots[i].failed);
      continue;
    }
    auto metrics = MetricsFile(slots[i].job, "candidate", r.report_dir, slots[i].wt.candidate);
    if (!metrics.ok()) return stop(metrics.status());
    if (metrics->unusable) {
      r.verdict = ProbeVerdict::kSkip;
      r.reason = "its run left nothing to compare: " + metrics->unusable->message();
      r.evidence = StatusJson(*metrics->unusable);
      continue;
    }
    json args = {{"baseline", good_metrics_}, {"candidate", metrics->file}, {"preset", config_.preset}, {"case", entry_.name}};
    if (config_.bitwise) args["bitwise"] = true;
    if (config_.tolerance_abs) args["tolerance"] = {{"abs", *config_.tolerance_abs}};
    auto compared = Call("compare_logs", args, r.report_dir);
    if (!compared.ok()) return stop(std::move(compared).take_status());
    std::string verdict = compared->value("verdict", "INCONCLUSIVE");
    r.reason = compared->value("verdict_reason", "");
    r.verdict = verdict == "PASS" ? ProbeVerdict::kSame : verdict == "FAIL" ? ProbeVerdict::kDiffers : ProbeVerdict::kSkip;
    if (r.verdict == ProbeVerdict::kSkip) r.reason = "the rule cannot decide (INCONCLUSIVE): " + r.reason;
    // The probe's own reproduce.json (its report directory is a whole comparison).
    auto rendered = Call("render_report", {{"cases", {entry_.name}}, {"formats", {"reproduce"}}, {"language", config_.language}},
                         r.report_dir);
    if (!rendered.ok()) r.warnings.push_back("probe " + batch[i].label + ": no reproduce.json: " + rendered.status().ToString());
  }
  cleanup_all();
  return out;
}

}  // namespace parity::workflow
