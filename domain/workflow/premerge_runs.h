// Steps 3-5 of `parity premerge` for each config, with the determinism contract:
//  - gate 1: the baseline runs twice from the same initial checkpoint (K times with
//    noise.repeats) and the repeat is compared bitwise (case <config>.gate1). Identical:
//    "determinism verified", the candidate is judged at the user's criterion. Not identical
//    and no calibration asked for: the run stops with the evidence (metric, first step,
//    size, environment fingerprints, determinism flags). With noise.repeats: the candidate
//    is judged against the K runs' noise envelope (compare_logs `noise`).
//  - the environment fingerprint of every run (probe_env's, recorded by run_training) must
//    be the same; a difference is named in the verdict, and a FAIL across differing
//    environments is INCONCLUSIVE (no vendor promises bitwise equality across them).
//  - gate 3 (a config's resume_at k): the candidate trained k steps, saved, and resumed to
//    `steps` must equal its uninterrupted run on the steps after k (case <config>.resume<k>).
//  - the baseline cache (baseline_cache.h): the baseline's runs are reused when their key
//    matches, and stored after a miss (premerge_cache.cpp).
// Every run and comparison is a call of the tool the skill names, through the StepRunner.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/baseline_cache.h"
#include "domain/workflow/fan_out.h"
#include "domain/workflow/pipeline.h"
#include "domain/workflow/premerge.h"

namespace parity::workflow {

struct Worktrees {
  std::string baseline, candidate;
};

// What the cache key needs from the earlier steps.
struct BaselineSource {
  std::string repo;             // the user's repository
  std::string commit;           // the baseline commit
  std::map<std::string, std::string> classes;  // path -> A|B|C|ignore, as confirmed
};

class CaseRunner {
 public:
  CaseRunner(const PremergeConfig& config, const PremergeOptions& options, StepRunner& runner,
             PipelineObserver& observer, PremergeOutcome& out);

  // Every config's gen_ckpt, then its baseline runs (or the cache's), candidate run and
  // gate 3's two runs, through the fan-out (fan_out.h): one after another locally, side by
  // side with max_parallel > 1 (a scheduler), gate 3's resume after its first part.
  Status Train(const std::vector<MatrixEntry>& matrix, const Worktrees& worktrees, const BaselineSource& source);
  // Log validation, gate 1, the candidate's comparison, gate 3's; appends to the outcome.
  Status Compare(const MatrixEntry& entry);
  // The compare_logs cases render_report shows, per config in matrix order.
  std::vector<std::string> ReportCases(const std::vector<MatrixEntry>& matrix) const;

  int TrainingRuns() const { return training_runs_; }  // run_training calls that trained

 private:
  struct Run {
    std::string side;         // baseline, baseline_r2.., candidate, candidate_resume1/2
    // absolute; events: the full-precision metrics compared (TensorBoard events, or the
    // trainer's metrics_file moved into the report directory), empty without either
    std::string log, events;
    nlohmann::json environment = nlohmann::json::object();  // {"sha256", "summary", ...}
    nlohmann::json job;       // run_training's job view (null for a cached run)
    nlohmann::json ledger_entry;  // a cached run's entry as first recorded (fresh runs: read at store)
    std::string recorded_report_dir, recorded_worktree;  // a cached run's paths of then
    bool from_cache = false;
  };
  struct Trained {
    std::vector<Run> baselines;
    Run candidate;
    std::vector<Run> resume;  // part 1 (k steps, saved), part 2 (resumed)
    std::string cache_key;
    int from_cache = 0;
  };

  Result<nlohmann::json> Call(const std::string& tool, const nlohmann::json& args);
  // `folder`: the run's own output folder when runs go side by side (max_parallel > 1).
  nlohmann::json RunArgs(const MatrixEntry& entry, const std::string& phase, const std::string& worktree,
                         const std::string& folder) const;
  nlohmann::json SideArgs(const MatrixEntry& entry, const std::string& side, const std::string& worktree, int steps,
                          const std::vector<std::string>& more) const;
  std::filesystem::path TensorBoardDir(const std::string& side, const std::string& config) const;
  // The run a fan-out outcome describes, with its log and TensorBoard events.
  Result<Run> RunOf(const MatrixEntry& entry, const std::string& side, const RunOutcome& outcome);
  // The batch script of the first run when the executor writes one, before anything starts.
  Status ShowPlan(const PlannedRun& first);
  // `slot(i)`: the worktree, side and config of plan run i, for metrics_file.
  FanOutOptions FanOutSettings(std::function<std::tuple<std::string, std::string, std::string>(size_t)> slot = {});
  // metrics_file: where a run's copy goes, and the move of the trainer's file out of the
  // worktree when the run ends (discarded when it failed), so the next run starts without one.
  std::filesystem::path MetricsCopy(const std::string& side, const std::string& config) const;
  Status TakeMetricsFile(const std::string& worktree, const std::string& side, const std::string& config,
                         const nlohmann::json& job, bool ok);
  bool FullPrecision() const { return config_.tensorboard || config_.metrics_file.has_value(); }
  // Where gate 3's two runs keep the save the second resumes from.
  std::string ResumeFolder(const MatrixEntry& entry) const;
  // Looks the baseline up in the cache; fills t.baselines / t.cache_key / t.from_cache.
  Status LookUpBaseline(const MatrixEntry& entry, const Worktrees& wt, const BaselineSource& source,
                        const nlohmann::json& checkpoint_run, Trained& t, nlohmann::json& material);
  int Repeats() const;
  static std::string BaselineSide(int index);  // 0 -> baseline, 1 -> baseline_r2, ...
  const std::string& Compared(const Run& run) const { return FullPrecision() ? run.events : run.log; }

  Status ValidateLogs(const MatrixEntry& entry, const Trained& t);
  Result<nlohmann::json> CompareCase(const std::string& case_name, const Run& baseline, const Run& candidate,
                                     bool bitwise, const std::vector<Run>* noise, bool common_steps);
  Status Gate1Failure(const MatrixEntry& entry, const Trained& t, const nlohmann::json& gate1) const;
  nlohmann::json EnvironmentCheck(const Trained& t, CaseVerdict& verdict) const;

  // premerge_cache.cpp
  Result<nlohmann::json> CacheMaterial(const MatrixEntry& entry, const Worktrees& wt, const BaselineSource& source,
                                       const nlohmann::json& checkpoint_run) const;
  Result<std::vector<Run>> ReuseCached(const MatrixEntry& entry, const Worktrees& wt, const BaselineSource& source,
                                       const CacheEntry& cached, int count);
  Status StoreInCache(const std::string& key, const nlohmann::json& material, const std::vector<Run>& runs);
  std::optional<BaselineCache> OpenCache(std::string& why_not) const;

  const PremergeConfig& config_;
  const PremergeOptions& options_;
  StepRunner& runner_;
  PipelineObserver& observer_;
  PremergeOutcome& out_;
  std::map<std::string, Trained> trained_;
  int training_runs_ = 0;
};

}  // namespace parity::workflow
