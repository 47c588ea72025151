// Executors: how a training job is launched, watched and stopped. Every training parity
// starts goes through one (jobs.h's StartJob), and a job's record names its executor, so
// any later parity process follows it from the record alone:
//   local  a detached supervisor on this machine (job_scripts.h)
//   ssh    the same supervisor on an SSH host
//   slurm  an sbatch job submitted from this machine or from an SSH login node (slurm.h):
//          queued, run and ended by the scheduler; parity reads squeue/scontrol/sacct and
//          cancels with scancel
// The caller chooses an executor by kind; the Slurm settings come from the user's file
// (slurm.h), never from the caller. Workflows ask run_training for runs and never branch on
// the executor.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "domain/run/slurm.h"
#include "support/status.h"

namespace parity::run {

using json = nlohmann::json;
struct JobSpec;

// One look at a job on its host.
struct JobPoll {
  bool exists = true;                    // the job directory (or the scheduler's record) exists
  bool ended = false;                    // the job is over and can be judged
  std::optional<int> exit_code;          // 128+N: killed by signal N
  std::optional<int64_t> finished_unix;
  bool timed_out = false, cancel_requested = false;
  std::string log_bytes;                 // new log bytes (remote jobs), from the offset asked
  // Slurm: the scheduler's view, and why it ended the job when it was not the training's
  // own exit ("the scheduler stopped it at its time limit ... (TIMEOUT, reason TimeLimit)").
  std::optional<SlurmState> scheduler;
  std::string scheduler_reason;
  bool scheduler_failure = false;        // ended by the scheduler (NODE_FAIL, OUT_OF_MEMORY, ...)
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string kind() const = 0;  // local | ssh | slurm
  // Where parity's own commands (path checks, git, the environment probe) run.
  virtual Host& host() = 0;
  // Starts the job whose record is `job` (already saved, ledger entry appended); returns
  // the fields to merge into the record (supervisor pid, Slurm job id, ...).
  virtual Result<json> Launch(const std::filesystem::path& report_dir, const json& job, const JobSpec& spec) = 0;
  // Polls once; `log_offset` < 0: the log is read locally, not returned.
  virtual Result<JobPoll> Poll(const std::filesystem::path& report_dir, const json& job, int64_t log_offset) = 0;
  virtual Status Cancel(const std::filesystem::path& report_dir, const json& job) = 0;
  // Fields added to the job's record when it is created (the executor's name for those
  // that are not the supervisor's; nothing for local and ssh, whose records predate this).
  virtual json RecordFields() const { return json::object(); }
  // Fields added to a job's view and ledger outcome; "message_prefix" (a live job's
  // scheduler state) goes before the view's message. Null: none.
  virtual json Describe(const json& job, const JobPoll* poll) const { return nullptr; }
};

struct ExecutorChoice {
  std::string kind = "local";              // local | ssh | slurm
  std::optional<SshTarget> ssh;            // ssh: the host; slurm: the login node (none: here)
  std::optional<SlurmSettings> slurm;      // slurm: the user's settings
};

// The detached supervisor on `host` (local or SSH, as the host is). `host` must outlive it.
std::unique_ptr<Executor> SupervisorExecutor(Host& host);
// Slurm submitted through `host`. `settings` are needed to launch, not to follow a job.
std::unique_ptr<Executor> SlurmExecutor(Host& host, std::optional<SlurmSettings> settings);

// The executor a job record names, over `host` (opened from the record when null).
class OwnedExecutor {
 public:
  OwnedExecutor(std::unique_ptr<Host> host, std::unique_ptr<Executor> executor)
      : host_(std::move(host)), executor_(std::move(executor)) {}
  Executor& operator*() { return *executor_; }
  Executor* operator->() { return executor_.get(); }

 private:
  std::unique_ptr<Host> host_;  // declared first: destroyed after the executor that uses it
  std::unique_ptr<Executor> executor_;
};
Result<OwnedExecutor> ExecutorForJob(const json& job, Host* host);

// Opens the host and the executor for a choice (SSH connects now).
Result<OwnedExecutor> OpenExecutor(const ExecutorChoice& choice);

// "slurm" when the record says so, else "ssh" or "local".
std::string ExecutorKindOf(const json& job);

}  // namespace parity::run
