// Slurm as an executor: what parity submits and how it reads the scheduler back.
//
// The settings (partition, account, nodes, tasks and accelerators per node, time limit,
// extra `#SBATCH` lines) are the user's: they are read from the user's own file,
// ${XDG_CONFIG_HOME:-~/.config}/parity/slurm.json, never from tool arguments, so a caller
// steered by what it read can choose the slurm executor but not what it asks the cluster for.
//
// Each run is one batch job: BatchScript() writes its `#SBATCH` lines and the training
// command (every value shell-quoted; with more than one task the command runs under `srun`
// and each rank's lines are prefixed "[rankN]:" as torchrun's --tee prefixes them).
// parity's own per-job options (job name, log, working directory) go on the sbatch command
// line (SbatchArgv), so no setting can redirect the log or the working directory.
//
// State comes from the scheduler: squeue while the job is queued or running (state, reason,
// node list), then scontrol (the controller's record: exit code, reason) and sacct (the
// accounting record, also after the controller has forgotten the job). ParseSlurmState
// turns their lines into one SlurmState.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::run {

struct SlurmSettings {
  std::optional<std::string> partition, account, qos;
  int nodes = 1;
  int tasks_per_node = 1;                 // >1 (or nodes >1): the command runs under srun
  std::optional<int> cpus_per_task;
  std::optional<int> gpus_per_node;       // --gpus-per-node
  std::optional<int> npus_per_node;       // --gres=npu:N (Ascend clusters' generic resource)
  std::optional<std::string> time_limit;  // sbatch --time syntax, e.g. "02:00:00"
  std::vector<std::string> sbatch_lines;  // each becomes "#SBATCH <line>", e.g. "--exclusive"
  std::vector<std::string> srun_args;     // added to srun, e.g. "--cpu-bind=none"
  std::string srun = "auto";              // auto (srun when more than one task) | always | never
  double poll_interval_s = 2;             // how often parity asks squeue/sacct about a job
};

// The settings file's JSON (unknown keys are refused; `name` prefixes error paths).
Result<SlurmSettings> ParseSlurmSettings(const nlohmann::json& value, const std::string& name);
nlohmann::json ToJson(const SlurmSettings& settings);

// ${XDG_CONFIG_HOME:-$HOME/.config}/parity/slurm.json
std::filesystem::path UserSlurmSettingsPath();
// The user's settings; NotFound (with an example in the hint) when the file is missing.
Result<SlurmSettings> ReadUserSlurmSettings();

struct BatchJob {
  std::string id;                          // parity's job id (names the Slurm job)
  std::vector<std::string> argv;           // the training
  std::map<std::string, std::string> env;  // exported before it
  std::string cwd;                         // absolute, on the cluster's shared filesystem
  std::string log;                         // absolute: where Slurm writes the job's output
  int timeout_s = 0;                       // >0: --time, rounded up to whole minutes
};

// The batch script's text (deterministic: the same inputs give the same bytes).
std::string BatchScript(const SlurmSettings& settings, const BatchJob& job);
// sbatch --parsable --job-name=... --output=<log> --open-mode=append --chdir=<cwd> <script>
Result<std::vector<std::string>> SbatchArgv(const BatchJob& job, const std::string& script_path);
// The time limit given to sbatch: the smaller of the settings' and the job's timeout.
std::optional<std::string> TimeLimitFor(const SlurmSettings& settings, int timeout_s);

// What the scheduler says about one job.
struct SlurmState {
  bool known = false;        // some command reported the job
  bool live = false;         // PENDING, RUNNING, COMPLETING, ... (not a final state)
  std::string state;         // "RUNNING", "TIMEOUT", "CANCELLED" (without " by <uid>")
  std::string state_detail;  // sacct's full text, e.g. "CANCELLED by 0"
  std::string reason;        // squeue/scontrol's reason ("BeginTime", "TimeLimit", "None")
  std::string nodes;         // node list
  std::string start, end;    // ISO local times as Slurm prints them; empty when unknown
  std::string elapsed, time_limit;
  std::optional<int> exit_code;  // of the batch script
  std::optional<int> signal;     // that ended it
  std::string source;            // squeue | scontrol | sacct

  nlohmann::json ToJson() const;
};

// Final states: COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY NODE_FAIL PREEMPTED BOOT_FAIL
// DEADLINE. Anything else a job can be in is live.
bool IsFinalSlurmState(const std::string& state);

// From one line each (empty when not asked or nothing printed):
//   squeue -h -j ID -o %T|%r|%N|%S|%M|%l
//   scontrol show job -o ID
//   sacct -n -P -X -j ID -o JobIDRaw,State,ExitCode,Reason,NodeList,Start,End,Elapsed,Timelimit
// squeue wins while the job is live; scontrol (fresh, with the exit signal and reason) is
// preferred over sacct (which may lag the controller by a moment) once it is not.
SlurmState ParseSlurmState(const std::string& squeue, const std::string& scontrol, const std::string& sacct);

}  // namespace parity::run
