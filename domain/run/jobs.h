// Training jobs: started through an executor (executor.h: a detached supervisor, locally or
// on an SSH host, that records the exit status in the job directory so the job outlives
// parity and the SSH connection; or a Slurm batch job, recorded by its id), watched through
// their log, cancelled by killing their process group, and judged once they end: exit
// status or signal, timeout, errors found in the log, NaN/Inf, fewer steps than asked.
// Everything a job is lives on disk (job_record.h), locally and on the SSH host, so any
// parity process can report on any job. Every job is one ledger entry: appended with
// status "running" when it starts, its outcome merged in when it is judged.
//
// A job "view" (the JSON every call returns) is:
//   {id, status: running|ok|failed|cancelled|timeout|lost, phase, side, config, launcher,
//    host, command: {argv, cwd, env}, log, log_path, started, finished, duration_s,
//    exit_code, signal, steps: {expected, last, lines}, latest_loss, latest_grad_norm,
//    nan_inf, findings, log_tail, checkpoint, ledger_entry, message, notes}, and for a Slurm
//   job slurm: {job_id, state, reason, nodes, start, end, elapsed, time_limit, exit_code,
//   signal, source, submit_host, batch_script}
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::run {

using json = nlohmann::json;
class Executor;

struct JobSpec {
  std::string phase = "train";  // train | gen_ckpt
  std::string side;             // baseline | candidate | ... (empty for gen_ckpt)
  std::string config;
  std::string launcher;
  std::vector<std::string> argv;
  std::string cwd;  // absolute, on the executing host
  std::map<std::string, std::string> env;
  std::optional<SshTarget> ssh;
  std::string remote_job_root = ".parity/jobs";  // relative to the remote home, or absolute
  int timeout_s = 0;                             // 0: none
  std::optional<int> expected_steps;
  std::optional<std::string> checkpoint_to_move;  // relative to cwd, moved to checkpoint_dir
  std::string checkpoint_dir;                     // absolute on the executing host
  bool clear_checkpoint_folder = true;            // rm -rf <cwd>/<dump_folder>/checkpoint first
  std::string dump_folder = "outputs";
  json inputs = json::object();  // recorded in the ledger
  json environment;              // probe_env's {fingerprint, summary}, or null
  std::vector<std::string> notes;
};

struct Progress {
  int64_t step = 0;
  std::optional<int64_t> total;
  std::string message;
};

struct WaitOptions {
  CancellationToken cancel;
  // Cancelling the wait also cancels the job (the caller started it in the same request).
  bool cancel_job_on_cancel = false;
  double poll_interval_s = 0.5;
  int max_wait_s = 0;  // 0: until the job ends; otherwise return the running view
  std::function<void(const Progress&)> on_progress;
};

// Starts the job through `executor` (whose host must match spec.ssh) and returns its view.
Result<json> StartJob(Executor& executor, const std::filesystem::path& report_dir, const JobSpec& spec);
// The same with the detached supervisor on `host` (the local and ssh executors).
Result<json> StartJob(Host& host, const std::filesystem::path& report_dir, const JobSpec& spec);

// Polls once (streaming a remote log into the report directory) and judges a finished job.
// `host` may be null for a local job (the executor is the record's); a remote job is polled only on the host the caller
// opened (never one a record names alone), and a host that is not the record's is refused.
// Cancel signals the job's process group only when a process of it carries the job's nonce
// in its environment (read from /proc on the executing host).
Result<json> JobStatus(const std::filesystem::path& report_dir, const std::string& id, Host* host = nullptr);
Result<json> WaitJob(const std::filesystem::path& report_dir, const std::string& id, const WaitOptions& options,
                     Host* host = nullptr);
Result<json> CancelJob(const std::filesystem::path& report_dir, const std::string& id, Host* host = nullptr);
// Every job in the report directory, unfinished ones polled (remote ones only when `host`
// is theirs; the others are listed with status "unknown" and the reason).
Result<json> ListJobs(const std::filesystem::path& report_dir, Host* host = nullptr);

// A failed/cancelled/timeout/lost job as an error Status carrying the view's evidence.
Status JobFailure(const json& view);

}  // namespace parity::run
