// The trainings of `parity bisect` (bisect.h), each one tool call through the StepRunner:
// the good commit once (initial checkpoint + training, in <root>/good), then any commit as a
// probe in its own report directory (audit_workspace diff + prepare with the probe as the
// candidate and the good commit as the baseline, so its ledger names both commits;
// run_training from the good side's checkpoint; parse_log; compare_logs against the good
// run with the premerge's rule; render_report's reproduce.json; cleanup). A batch of
// probes runs its trainings concurrently (run_training wait:false, then wait on each).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/bisect_search.h"
#include "domain/workflow/pipeline.h"
#include "domain/workflow/premerge_config.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct ProbeRequest {
  std::string commit;
  std::string label;  // the probe directory's name under <root>/probes ("03-1a2b3c4d5e6f")
};

struct ProbeResult {
  ProbeVerdict verdict = ProbeVerdict::kSkip;
  std::string reason;
  nlohmann::json evidence;  // skip: the error as {kind, message, hint, evidence}
  std::filesystem::path report_dir;
  std::vector<std::string> warnings;
  std::string scheduler_job;  // the training's Slurm job id (executor slurm), else empty
};

class BisectProber {
 public:
  BisectProber(const PremergeConfig& config, MatrixEntry entry, std::filesystem::path top, StepRunner& runner,
               PipelineObserver& observer, CancellationToken cancel, bool keep_worktrees);

  // The uncommitted files' classes for every probe (B is copied, C and ignore are not).
  void SetUncommittedClasses(std::map<std::string, std::string> classes) { uncommitted_ = std::move(classes); }

  // The good side, once: a failure here is an error (nothing can be compared with it).
  Status RunGood(const std::string& good_commit);
  // Probes run together; a fatal error (a refused tool, a worktree that cannot be made) is
  // an error, a commit that does not build or run is a kSkip result with its evidence.
  Result<std::vector<ProbeResult>> Probe(const std::vector<ProbeRequest>& batch);

  size_t trainings() const { return trainings_; }
  // Every training's Slurm job id in the order started (the good side's two included).
  const std::vector<std::string>& scheduler_jobs() const { return jobs_; }
  std::filesystem::path good_dir() const { return config_.report_dir / "good"; }

 private:
  struct Worktrees {
    std::string baseline, candidate;
  };
  Result<nlohmann::json> Call(const std::string& tool, nlohmann::json args, const std::filesystem::path& report_dir);
  Result<Worktrees> Prepare(const std::string& commit, const std::string& label, const std::filesystem::path& dir);
  nlohmann::json TrainArgs(const std::string& phase, const std::string& side, const std::string& worktree,
                           const std::filesystem::path& dir) const;
  // The file compared: the TensorBoard events (full precision) or the log; `unusable` when
  // the run left none to compare (its log holds errors, no event file): the commit is skipped.
  struct Metrics {
    std::string file;
    std::optional<Status> unusable;
  };
  // `worktree`: where the run trained (its metrics_file, when premerge.json names one, is
  // moved from there into dir/metrics/).
  Result<Metrics> MetricsFile(const nlohmann::json& job, const std::string& side, const std::filesystem::path& dir,
                              const std::string& worktree);
  Result<std::optional<Status>> CheckLog(const std::string& log);
  void Cleanup(const Worktrees& wt, const std::filesystem::path& dir, std::vector<std::string>& warnings);
  // The job's Slurm id, recorded in scheduler_jobs(); empty for a job of another executor.
  std::string NoteJob(const nlohmann::json& job);

  const PremergeConfig& config_;
  MatrixEntry entry_;
  std::filesystem::path top_;
  StepRunner& run_;
  PipelineObserver& obs_;
  CancellationToken cancel_;
  bool keep_;
  std::map<std::string, std::string> uncommitted_;
  std::string good_commit_, good_metrics_, checkpoint_;
  size_t trainings_ = 0;
  std::vector<std::string> jobs_;
};

nlohmann::json StatusJson(const Status& status);

}  // namespace parity::workflow
