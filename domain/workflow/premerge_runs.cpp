#include "domain/workflow/premerge_runs.h"

#include <algorithm>

#include "domain/env/probe.h"
#include "domain/workflow/tensorboard_run.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// The flags and variables that decide whether a run can repeat itself bit for bit.
json DeterminismFlags(const json& job, const json& environment) {
  json flags = json::array();
  for (const auto& a : job.value("command", json::object()).value("argv", json::array())) {
    if (!a.is_string()) continue;
    std::string s = a;
    if (s.find("determinis") != std::string::npos || s.find("seed") != std::string::npos) flags.push_back(s);
  }
  json env = environment.is_object() && environment.contains("summary") ? environment["summary"].value("env", json::object())
                                                                       : json::object();
  return {{"argv", flags}, {"env", env}};
}

}  // namespace

CaseRunner::CaseRunner(const PremergeConfig& config, const PremergeOptions& options, StepRunner& runner,
                       PipelineObserver& observer, PremergeOutcome& out)
    : config_(config), options_(options), runner_(runner), observer_(observer), out_(out) {}

Result<json> CaseRunner::Call(const std::string& tool, const json& args) {
  auto r = runner_.Call(tool, args);
  if (!r.ok()) return std::move(r).take_status().Context(tool);
  return r;
}

int CaseRunner::Repeats() const { return config_.noise.repeats > 0 ? config_.noise.repeats : 2; }

std::string CaseRunner::BaselineSide(int index) {
  return index == 0 ? "baseline" : "baseline_r" + std::to_string(index + 1);
}

json CaseRunner::RunArgs(const MatrixEntry& entry, const std::string& phase, const std::string& worktree,
                         const std::string& folder) const {
  json args = TrainingStartArgs(config_, entry, phase, worktree);
  args["report_dir"] = config_.report_dir.string();
  // Runs side by side share the candidate worktree: each gets its own output folder, so
  // no run clears or moves another's checkpoint folder. Started back to back, they are not
  // probed one by one (a probe imports torch: seconds per start, and the runs would no
  // longer overlap); Step 1's probe of this host, where each run is started, is the
  // fingerprint in the ledger.
  if (config_.max_parallel > 1) {
    args["dump_folder"] = "outputs/parity_" + folder + "_" + entry.name;
    args["probe_env"] = false;
  }
  return args;
}

// Full-precision values: the printed digits of a torchtitan log (loss 5, grad_norm 4
// decimals) cannot decide 1e-5, so the runs also write TensorBoard into the report directory.
fs::path CaseRunner::TensorBoardDir(const std::string& side, const std::string& config) const {
  return config_.report_dir / "tb" / (side + "_" + config);
}

std::string CaseRunner::ResumeFolder(const MatrixEntry& entry) const {
  return config_.max_parallel > 1 ? "outputs/parity_candidate_resume_" + entry.name : "outputs";
}

json CaseRunner::SideArgs(const MatrixEntry& entry, const std::string& side, const std::string& worktree, int steps,
                          const std::vector<std::string>& more) const {
  // Gate 3's two parts share one output folder: the second resumes from the first's save.
  const bool resume = side.rfind("candidate_resume", 0) == 0;
  json args = RunArgs(entry, "train", worktree, resume ? "candidate_resume" : side);
  args["side"] = side;
  args["steps"] = steps;
  std::vector<std::string> extra = args.value("extra_args", std::vector<std::string>{});
  extra.insert(extra.end(), more.begin(), more.end());
  if (config_.tensorboard) {
    for (auto& flag : TensorBoardFlags(TensorBoardDir(side, entry.name))) extra.push_back(flag);
  }
  if (!extra.empty()) args["extra_args"] = extra;
  return args;
}

namespace {
// How a premerge run whose trainer writes no TensorBoard goes on.
constexpr const char* kNoTensorBoardHint =
    "Make the trainer write TensorBoard (the tensorboard package in its interpreter), or set \"tensorboard\": "
    "false in premerge.json to compare the printed values knowingly";

std::string LogPathOf(const json& job, const fs::path& report_dir) {
  std::string log = job.value("log_path", "");
  return log.empty() ? (report_dir / job.value("log", "")).string() : log;
}
}  // namespace

Result<CaseRunner::Run> CaseRunner::RunOf(const MatrixEntry& entry, const std::string& side, const RunOutcome& outcome) {
  Run r;
  r.side = side;
  r.job = outcome.job;
  r.environment = outcome.environment;
  r.log = LogPathOf(outcome.job, config_.report_dir);
  observer_.Note(entry.name + ": " + side + " " + outcome.job.value("message", "ok") + " (" + r.log + ")");
  if (config_.tensorboard) {
    const fs::path dir = TensorBoardDir(side, entry.name);
    auto events = NewestEventFile(dir);
    if (!events.ok()) return NoTensorBoardEvents(entry.name + ": the " + side + " run", dir, r.log, kNoTensorBoardHint);
    r.events = events->string();
  }
  if (config_.metrics_file) r.events = MetricsCopy(side, entry.name).string();  // TakeMetricsFile made it
  return r;
}

fs::path CaseRunner::MetricsCopy(const std::string& side, const std::string& config) const {
  return config_.report_dir / "metrics" / (side + "_" + config + ".jsonl");
}

Status CaseRunner::TakeMetricsFile(const std::string& worktree, const std::string& side, const std::string& config,
                                   const json& job, bool ok) {
  if (!ok) return RemoveUnder(worktree, *config_.metrics_file);  // a failed run's partial file is not the next run's
  const fs::path copy = MetricsCopy(side, config);
  PARITY_RETURN_IF_ERROR(MoveMetricsFile(worktree, *config_.metrics_file, config_.report_dir, copy,
                                         config + ": the " + side + " run", LogPathOf(job, config_.report_dir)));
  observer_.Note(config + ": " + side + " metrics " + (fs::path(worktree) / *config_.metrics_file).string() +
                 " moved to " + copy.string());
  return Status::Ok();
}

Status CaseRunner::ShowPlan(const PlannedRun& first) {
  json args = first.args;
  args["action"] = "plan";
  PARITY_ASSIGN_OR_RETURN(json planned, Call("run_training", args));
  const json& plan = planned.value("plan", json::object());
  if (plan.contains("batch_script") && plan["batch_script"].is_string()) {
    observer_.Note("batch script of " + first.label + " (from " + plan.value("settings_file", "the user's settings") +
                   "; every run's is recorded in jobs/<id>/batch.sh):\n" + plan["batch_script"].get<std::string>());
  }
  return Status::Ok();
}

FanOutOptions CaseRunner::FanOutSettings(std::function<std::tuple<std::string, std::string, std::string>(size_t)> slot) {
  FanOutOptions options;
  options.max_parallel = static_cast<size_t>(std::max(1, config_.max_parallel));
  options.stop_at_first_failure = config_.stop_at_first_failure;
  options.poll_interval_s = 0.5;
  options.cancel = options_.cancel;
  if (config_.metrics_file && slot) {
    options.on_end = [this, slot](size_t i, const json& job, bool ok) {
      auto [worktree, side, config] = slot(i);
      return TakeMetricsFile(worktree, side, config, job, ok);
    };
  }
  return options;
}

Status CaseRunner::LookUpBaseline(const MatrixEntry& entry, const Worktrees& wt, const BaselineSource& source,
                                  const json& checkpoint_run, Trained& t, json& material) {
  const int repeats = Repeats();
  std::string why_not;
  std::optional<BaselineCache> cache = OpenCache(why_not);
  if (cache) {
    auto m = CacheMaterial(entry, wt, source, checkpoint_run);
    if (m.ok()) {
      material = std::move(m).value();
      t.cache_key = BaselineCache::KeyOf(material);
    } else {
      why_not = m.status().message();
    }
  }
  if (!t.cache_key.empty()) {
    auto hit = cache->Lookup(t.cache_key);
    if (!hit.ok()) {
      std::string line = entry.name + ": " + hit.status().message() + "; training the baseline again";
      observer_.Note(line);
      out_.warnings.push_back(line);
    } else if (*hit) {
      const int reuse = std::min<int>(repeats, static_cast<int>((*hit)->runs.size()));
      PARITY_ASSIGN_OR_RETURN(t.baselines, ReuseCached(entry, wt, source, **hit, reuse));
      t.from_cache = reuse;
      observer_.Note(entry.name + ": " + std::to_string(reuse) + " baseline run(s) from the cache (key " +
                     t.cache_key.substr(0, 16) + ", stored " + (*hit)->created + ")");
    } else {
      observer_.Note(entry.name + ": baseline not in the cache (key " + t.cache_key.substr(0, 16) + ")");
    }
  } else if (!why_not.empty()) {
    observer_.Note(entry.name + ": baseline cache not used: " + why_not);
  }
  return Status::Ok();
}

Status CaseRunner::Train(const std::vector<MatrixEntry>& matrix, const Worktrees& wt, const BaselineSource& source) {
  const int repeats = Repeats();
  // Every config's initial checkpoint first: the cache key is the checkpoint's hash. The
  // one-step run asks for TensorBoard too, so a trainer that cannot write it is named as
  // such before any baseline or candidate run.
  std::vector<PlannedRun> checkpoints;
  for (const auto& entry : matrix) {
    observer_.Note(entry.name + ": initial checkpoint (1 step, HF format) in the candidate worktree");
    json gen = RunArgs(entry, "gen_ckpt", wt.candidate, "gen_ckpt");
    if (config_.tensorboard) {
      std::vector<std::string> extra = gen.value("extra_args", std::vector<std::string>{});
      for (auto& flag : TensorBoardFlags(TensorBoardDir("gen_ckpt", entry.name))) extra.push_back(flag);
      gen["extra_args"] = extra;
    }
    checkpoints.push_back({entry.name + " initial checkpoint", gen, std::nullopt});
  }
  if (checkpoints.empty()) return Status::Ok();
  if (config_.metrics_file) {
    // The worktrees are fresh checkouts: a file already at metrics_file is in the repository,
    // and a run that writes none could not be told from one that wrote it. Refused, not
    // removed (the file is the repository's, and removing it would change the tree).
    for (const std::string& tree : {wt.baseline, wt.candidate}) {
      PARITY_RETURN_IF_ERROR(RefuseMetricsFileInTree(tree, *config_.metrics_file));
    }
  }
  PARITY_RETURN_IF_ERROR(ShowPlan(checkpoints.front()));
  auto checkpoint_slot = [&](size_t i) { return std::tuple{wt.candidate, std::string("gen_ckpt"), matrix[i].name}; };
  PARITY_ASSIGN_OR_RETURN(std::vector<RunOutcome> made,
                          FanOut(checkpoints, FanOutSettings(checkpoint_slot), runner_, observer_));
  PARITY_RETURN_IF_ERROR(FanOutFailure(checkpoints, made));
  training_runs_ += static_cast<int>(checkpoints.size());

  // Then every run that loads them, together.
  struct Slot {
    size_t config;
    std::string side;
  };
  std::vector<PlannedRun> plan;
  std::vector<Slot> slots;
  std::map<std::string, Trained> trained;
  std::map<std::string, json> materials;
  auto add = [&](size_t c, const std::string& side, json args, std::optional<size_t> after = std::nullopt) {
    observer_.Note(matrix[c].name + ": " + side + " run, " + std::to_string(args.value("steps", 0)) + " steps");
    plan.push_back({matrix[c].name + " " + side, std::move(args), after});
    slots.push_back({c, side});
    return plan.size() - 1;
  };
  for (size_t c = 0; c < matrix.size(); ++c) {
    const MatrixEntry& entry = matrix[c];
    const json& job = made[c].job;
    observer_.Note(entry.name + ": checkpoint " + job.value("checkpoint", "?"));
    if (config_.tensorboard && !NewestEventFile(TensorBoardDir("gen_ckpt", entry.name)).ok()) {
      return NoTensorBoardEvents(entry.name + ": the initial-checkpoint run", TensorBoardDir("gen_ckpt", entry.name),
                                 LogPathOf(job, config_.report_dir), kNoTensorBoardHint);
    }
    Trained& t = trained[entry.name];
    PARITY_RETURN_IF_ERROR(LookUpBaseline(entry, wt, source, json{{"job", job}, {"environment", made[c].environment}}, t,
                                          materials[entry.name]));
    for (int i = static_cast<int>(t.baselines.size()); i < repeats; ++i) {
      add(c, BaselineSide(i), SideArgs(entry, BaselineSide(i), wt.baseline, config_.steps, {}));
    }
    add(c, "candidate", SideArgs(entry, "candidate", wt.candidate, config_.steps, {}));
    if (entry.resume_at) {
      // Gate 3: k steps with a full save at the last one (model and optimizer, not
      // load-only), then the same run resumed from that save (its folder kept).
      const int k = *entry.resume_at;
      size_t part1 = add(c, "candidate_resume1", SideArgs(entry, "candidate_resume1", wt.candidate, k,
                                                          {"--checkpoint.no_load_only", "--checkpoint.no_last_save_model_only"}));
      json resumed = SideArgs(entry, "candidate_resume2", wt.candidate, config_.steps, {});
      resumed["clear_checkpoint_folder"] = false;
      add(c, "candidate_resume2", std::move(resumed), part1);
    }
  }
  auto run_slot = [&](size_t i) {
    const std::string& side = slots[i].side;
    return std::tuple{side.rfind("baseline", 0) == 0 ? wt.baseline : wt.candidate, side, matrix[slots[i].config].name};
  };
  PARITY_ASSIGN_OR_RETURN(std::vector<RunOutcome> outcomes, FanOut(plan, FanOutSettings(run_slot), runner_, observer_));
  PARITY_RETURN_IF_ERROR(FanOutFailure(plan, outcomes));
  training_runs_ += static_cast<int>(plan.size());
  for (const auto& o : made) {
    if (!o.job.value("slurm", json()).is_null()) out_.jobs.push_back(o.job["slurm"].value("job_id", ""));
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    const MatrixEntry& entry = matrix[slots[i].config];
    const std::string& side = slots[i].side;
    if (!outcomes[i].job.value("slurm", json()).is_null()) out_.jobs.push_back(outcomes[i].job["slurm"].value("job_id", ""));
    PARITY_ASSIGN_OR_RETURN(Run run, RunOf(entry, side, outcomes[i]));
    Trained& t = trained[entry.name];
    if (side == "candidate") t.candidate = std::move(run);
    else if (side.rfind("candidate_resume", 0) == 0) t.resume.push_back(std::move(run));
    else t.baselines.push_back(std::move(run));
  }

  for (const auto& entry : matrix) {
    Trained& t = trained[entry.name];
    if (!t.cache_key.empty() && t.from_cache < repeats) {
      std::string why_not;
      std::optional<BaselineCache> cache = OpenCache(why_not);
      Status stored = cache ? StoreInCache(t.cache_key, materials[entry.name], t.baselines)
                            : Unavailable("the cache cannot be opened: " + why_not);
      std::string line = entry.name + ": " + (stored.ok() ? "baseline runs stored in the cache " + cache->root().string()
                                                          : "baseline runs not cached: " + stored.message());
      observer_.Note(line);
      if (!stored.ok()) out_.warnings.push_back(line);
    }
    if (entry.resume_at) {
      // The resume save is parity's own output in the candidate worktree: removed, as
      // run_training clears the checkpoint folder before a run, so cleanup finds the tree as made.
      std::error_code ec;
      const fs::path saved = fs::path(wt.candidate) / ResumeFolder(entry) / "checkpoint";
      fs::remove_all(saved, ec);
      if (ec) return Unavailable("cannot remove gate 3's checkpoint folder " + saved.string() + ": " + ec.message());
      observer_.Note(entry.name + ": removed gate 3's checkpoint folder " + saved.string());
    }
    trained_[entry.name] = std::move(t);
  }
  return Status::Ok();
}

// Step 5b: the run logs must hold no error (错误上报原则), whatever file is compared.
Status CaseRunner::ValidateLogs(const MatrixEntry& entry, const Trained& t) {
  json paths = json::array();
  for (const auto& r : t.baselines) paths.push_back(r.log);
  paths.push_back(t.candidate.log);
  for (const auto& r : t.resume) paths.push_back(r.log);
  PARITY_ASSIGN_OR_RETURN(json parsed, Call("parse_log", {{"paths", paths}}));
  for (const auto& f : parsed.value("files", json::array())) {
    for (const auto& w : f.value("warnings", json::array())) {
      std::string line = entry.name + ": " + f.value("path", "?") + ": " + (w.is_string() ? w.get<std::string>() : w.dump());
      observer_.Note("log warning " + line);
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

Result<json> CaseRunner::CompareCase(const std::string& case_name, const Run& baseline, const Run& candidate,
                                     bool bitwise, const std::vector<Run>* noise, bool common_steps) {
  json args = {{"report_dir", config_.report_dir.string()}};
  args.update({{"baseline", Compared(baseline)}, {"candidate", Compared(candidate)}, {"preset", config_.preset},
               {"case", case_name}});
  if (bitwise) {
    args["bitwise"] = true;
  } else if (noise) {
    json runs = json::array();
    for (const auto& r : *noise) runs.push_back(Compared(r));
    args["noise"] = {{"runs", runs}, {"safety_factor", config_.noise.safety_factor}};
  } else {
    if (config_.bitwise) args["bitwise"] = true;
    if (config_.tolerance_abs) args["tolerance"] = {{"abs", *config_.tolerance_abs}};
  }
  if (common_steps) args["steps"] = "common";
  return Call("compare_logs", args);
}

Status CaseRunner::Gate1Failure(const MatrixEntry& entry, const Trained& t, const json& gate1) const {
  // The first metric that differs, where, and by how much.
  std::string what;
  const json metrics = gate1.value("metrics", json::object());  // a named copy: items() keeps a reference
  for (const auto& [metric, m] : metrics.items()) {
    if (m.value("verdict", "") != "FAIL") continue;
    const json& first = m.value("offending", json::array()).empty() ? json::object() : m["offending"][0];
    what = metric + " first differs at step " + first.value("step", json(nullptr)).dump() + " (run 1 " +
           first.value("baseline", json(nullptr)).dump() + ", run 2 " + first.value("candidate", json(nullptr)).dump() +
           ", |difference| " + first.value("abs", json(nullptr)).dump() + "; max " + m.value("max_abs", json(nullptr)).dump() +
           " at step " + m.value("max_abs_step", json(nullptr)).dump() + ")";
    break;
  }
  const Run& a = t.baselines[0];
  const Run& b = t.baselines[1];
  const std::string fa = a.environment.value("sha256", ""), fb = b.environment.value("sha256", "");
  json fingerprints = {{"run1", fa}, {"run2", fb}, {"same", !fa.empty() && fa == fb}};
  if (fa != fb && a.environment.contains("summary") && b.environment.contains("summary")) {
    fingerprints["differences"] = env::DiffSummaries(a.environment["summary"], b.environment["summary"]);
  }
  return FailedPrecondition("gate 1: the baseline does not repeat itself: " + entry.name + " run twice from the same "
                            "checkpoint, commit and command is not bitwise identical: " + what +
                            "; a comparison against it would judge noise")
      .WithHint("find the non-deterministic kernel or flag (the skill's traps: deterministic algorithms off, "
                "HCCL/NCCL reduction order, a flag applied after the model was built), or ask for a calibrated "
                "verdict with \"noise\": {\"repeats\": 3} in premerge.json")
      .WithEvidence("gate1_report", (config_.report_dir / (entry.name + ".gate1") / "report.json").string())
      .WithEvidence("environment_fingerprints", fingerprints.dump(2))
      .WithEvidence("determinism_flags", DeterminismFlags(a.job.is_null() ? json::object() : a.job, a.environment).dump(2));
}

// Every run of the case must share the fingerprint; a difference is named in the verdict,
// and a FAIL across differing environments is no evidence against the change.
json CaseRunner::EnvironmentCheck(const Trained& t, CaseVerdict& verdict) const {
  std::vector<const Run*> runs;
  for (const auto& r : t.baselines) runs.push_back(&r);
  runs.push_back(&t.candidate);
  const Run& ref = *runs.front();
  const std::string fp = ref.environment.value("sha256", "");
  json out = {{"fingerprint", fp.empty() ? json(nullptr) : json(fp)}, {"same", !fp.empty()}, {"differences", json::array()}};
  if (fp.empty()) {
    out["note"] = "no environment fingerprint was recorded for " + ref.side;
    return out;
  }
  std::vector<std::string> keys;
  for (const Run* r : runs) {
    const std::string other = r->environment.value("sha256", "");
    if (other == fp) continue;
    out["same"] = false;
    json diff = ref.environment.contains("summary") && r->environment.contains("summary")
                    ? env::DiffSummaries(ref.environment["summary"], r->environment["summary"])
                    : json::array();
    for (const auto& d : diff) keys.push_back(d.value("key", "?"));
    out["differences"].push_back({{"side", r->side}, {"fingerprint", other}, {"keys", diff}});
  }
  if (!out["same"].get<bool>()) {
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::string named = "the runs' environments differ (" + (keys.empty() ? std::string("fingerprint") : Join(keys)) + ")";
    if (verdict.verdict == "FAIL") {
      verdict.verdict = "INCONCLUSIVE";
      verdict.reason = named + ": bitwise equality is not promised across environments, so this difference is no "
                               "evidence against the change; rerun both sides in one environment. " + verdict.reason;
    } else {
      verdict.reason += "; note: " + named;
    }
  }
  return out;
}

Status CaseRunner::Compare(const MatrixEntry& entry) {
  const Trained& t = trained_.at(entry.name);
  PARITY_RETURN_IF_ERROR(ValidateLogs(entry, t));
  const bool calibrated = config_.noise.repeats > 0;

  // Gate 1: the baseline against its own repeat, bit for bit.
  const std::string gate_case = entry.name + ".gate1";
  PARITY_ASSIGN_OR_RETURN(json gate1, CompareCase(gate_case, t.baselines[0], t.baselines[1], true, nullptr, false));
  DeterminismRecord record;
  record.config = entry.name;
  record.gate1 = gate1.value("verdict", "INCONCLUSIVE");
  record.report_json = (config_.report_dir / gate_case / "report.json").string();
  record.baseline_runs = static_cast<int>(t.baselines.size());
  record.from_cache = t.from_cache;
  record.cache_key = t.cache_key;
  record.calibrated = calibrated;
  if (record.gate1 == "PASS") {
    record.reason = "determinism verified: the baseline repeated bit for bit (" + gate1.value("verdict_reason", "") + ")";
  } else if (record.gate1 == "FAIL") {
    record.reason = "the baseline does not repeat itself: " + gate1.value("verdict_reason", "");
    if (!calibrated) return Gate1Failure(entry, t, gate1);
    record.reason += "; the candidate is judged against the noise of " + std::to_string(t.baselines.size()) + " runs";
  } else {
    record.reason = "gate 1 undecided: " + gate1.value("verdict_reason", "");
  }
  observer_.Note(entry.name + ": gate 1 " + record.gate1 + " — " + record.reason);

  PARITY_ASSIGN_OR_RETURN(json compared, CompareCase(entry.name, t.baselines[0], t.candidate, false,
                                                  calibrated ? &t.baselines : nullptr, false));
  CaseVerdict v{entry.name, compared.value("verdict", "INCONCLUSIVE"), compared.value("verdict_reason", ""),
                (config_.report_dir / entry.name / "report.json").string()};
  if (record.gate1 == "INCONCLUSIVE" && !calibrated && v.verdict == "PASS") {
    // A PASS is a proof only when the baseline is known to repeat itself.
    v.verdict = "INCONCLUSIVE";
    v.reason = "gate 1 could not show that the baseline repeats bit for bit (" + gate1.value("verdict_reason", "") +
               "), so the candidate's agreement proves nothing; " + v.reason;
  }
  record.environment = EnvironmentCheck(t, v);
  observer_.Note(entry.name + ": " + v.verdict + " — " + v.reason);
  out_.cases.push_back(std::move(v));

  if (!t.resume.empty()) {
    // Gate 3: the resumed run against the uninterrupted one, on the steps after the save.
    const std::string resume_case = entry.name + ".resume" + std::to_string(*entry.resume_at);
    PARITY_ASSIGN_OR_RETURN(json resumed, CompareCase(resume_case, t.candidate, t.resume[1], !calibrated,
                                                   calibrated ? &t.baselines : nullptr, true));
    CaseVerdict r{resume_case, resumed.value("verdict", "INCONCLUSIVE"), resumed.value("verdict_reason", ""),
                  (config_.report_dir / resume_case / "report.json").string()};
    r.reason = "resume equivalence (saved at step " + std::to_string(*entry.resume_at) + ", resumed to " +
               std::to_string(config_.steps) + "): " + r.reason;
    observer_.Note(resume_case + ": " + r.verdict + " — " + r.reason);
    out_.cases.push_back(std::move(r));
  }
  out_.determinism.push_back(std::move(record));
  return Status::Ok();
}

std::vector<std::string> CaseRunner::ReportCases(const std::vector<MatrixEntry>& matrix) const {
  // render_report attaches <config>.gate1 to its case (a determinism section), so it is not
  // a case of its own.
  std::vector<std::string> cases;
  for (const auto& e : matrix) {
    cases.push_back(e.name);
    if (e.resume_at) cases.push_back(e.name + ".resume" + std::to_string(*e.resume_at));
  }
  return cases;
}

}  // namespace parity::workflow
