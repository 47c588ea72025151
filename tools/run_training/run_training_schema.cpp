#include "tools/run_training/run_training_schema.h"

#include "tools/run_training/remote_params.h"

namespace parity::tools {

using json = nlohmann::json;

json RunTrainingInputSchema() {
  static const json schema = [] {
    json s = json::parse(R"json({
  "type": "object",
  "properties": {
    "action": {"type": "string", "enum": ["start", "plan", "status", "wait", "cancel", "list"], "default": "start",
      "description": "start a job; plan: what start would run (the command, and for Slurm the batch script) without running anything; status / wait / cancel a job by job_id; list the jobs of the report directory."},
    "executor": {"type": "string", "enum": ["local", "ssh", "slurm"],
      "description": "Where the run goes: local (default), ssh (the host in ssh; the default when ssh is given), or slurm: an sbatch job submitted here or, with ssh, from that login node, with the partition, account, nodes, accelerators, time limit and #SBATCH lines of the user's own settings file (~/.config/parity/slurm.json; not settable through arguments). The worktree and report directory must be on the cluster's shared filesystem."},
    "job_id": {"type": "string", "description": "status, wait, cancel: the job."},
    "report_dir": {"type": "string", "description": "Report directory (logs, jobs/, ledger); default the server's."},
    "worktree": {"type": "string", "description": "start: absolute directory the training runs in (a parity worktree; on the SSH host in remote mode)."},
    "phase": {"type": "string", "enum": ["train", "gen_ckpt"], "default": "train",
      "description": "gen_ckpt: skill B1, one step saved in HF format, moved to checkpoint_dir. train: skill B2, loads checkpoint_dir."},
    "side": {"type": "string", "description": "baseline or candidate (any name); names the log <side>_<config>_train.log. Required for phase train."},
    "config": {"type": "string", "description": "Config name: --config for torchtitan, and the <config> of log and checkpoint names."},
    "launcher": {"type": "string", "enum": ["torchtitan", "megatron", "custom", "argv"], "default": "torchtitan"},
    "model": {"type": "string", "description": "torchtitan --module."},
    "script": {"type": "string", "description": "Launcher script; torchtitan default scripts/run_train.sh; required for megatron."},
    "dataset_path": {"type": "string"},
    "steps": {"type": "integer", "minimum": 1, "description": "Training steps (presets default 100; gen_ckpt always 1)."},
    "seed": {"type": "integer", "default": 42},
    "deterministic": {"type": "boolean", "default": true, "description": "Adds --debug.deterministic (torchtitan) / --deterministic-mode (megatron). --debug.deterministic_warn_only is always refused."},
    "load_checkpoint": {"type": "boolean", "default": true, "description": "phase train: start from the initial checkpoint."},
    "checkpoint_dir": {"type": "string", "description": "The initial checkpoint: where gen_ckpt leaves it and train loads it. Default <report_dir>/initial_ckpt_<config> locally; required in remote mode."},
    "template": {"type": "string", "description": "launcher custom: command template split on spaces, then {model} {config} {steps} {seed} {dataset_path} {checkpoint_dir} {report_dir} {worktree} {side} {phase} filled in (a value never splits into several arguments)."},
    "argv": {"type": "array", "items": {"type": "string"}, "description": "launcher argv: the exact command."},
    "extra_args": {"type": "array", "items": {"type": "string"}, "description": "Appended to the command (e.g. --parallelism.tensor_parallel_degree=2)."},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Environment variables for the training (recorded)."},
    "timeout_s": {"type": "integer", "minimum": 0, "default": 0, "description": "Kill the training after this many seconds (0: no limit). Enforced on the executing host, also when parity is gone; on Slurm it is the job's --time, in whole minutes (the smaller of it and the settings' time_limit)."},
    "wait": {"type": "boolean", "default": true, "description": "start: follow the job to its end with progress notifications; false returns the job id at once."},
    "wait_timeout_s": {"type": "integer", "minimum": 0, "default": 0, "description": "start/wait: stop following after this many seconds and return the running job (0: until it ends)."},
    "clear_checkpoint_folder": {"type": "boolean", "default": true, "description": "rm -rf <worktree>/<dump_folder>/checkpoint before a gen_ckpt or loading run, as the skill does (torchtitan ignores initial_load_path when that folder is not empty)."},
    "dump_folder": {"type": "string", "default": "outputs", "description": "The training's output folder in the worktree (its checkpoint folder is cleared and the initial checkpoint taken from it); other than outputs it is passed to torchtitan as --job.dump_folder. Runs side by side in one worktree need one each."},
    "probe_env": {"type": "boolean", "default": true, "description": "Record the environment fingerprint (probe_env) with the run."},
    "python": {"type": "string", "description": "Interpreter probed for the fingerprint; default /usr/bin/python3 locally, python3 remotely."},
    "remote_job_root": {"type": "string", "default": ".parity/jobs", "description": "Remote mode: where job directories live on the host (relative to the remote home or absolute)."}
  },
  "additionalProperties": false
})json");
    const json& remote = RemoteSchemaProperties();
    for (auto it = remote.begin(); it != remote.end(); ++it) s["properties"][it.key()] = it.value();
    return s;
  }();
  return schema;
}

json RunTrainingOutputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "properties": {
    "job": {"type": "object", "required": ["id", "status", "command", "log"],
      "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "enum": ["running", "ok", "failed", "cancelled", "timeout", "lost"]},
        "phase": {"type": "string"}, "side": {"type": ["string", "null"]}, "config": {"type": "string"},
        "host": {"type": "string"},
        "command": {"type": "object", "properties": {"argv": {"type": "array", "items": {"type": "string"}}, "cwd": {"type": "string"}, "env": {"type": "object"}}},
        "log": {"type": "string"}, "log_path": {"type": "string"},
        "exit_code": {"type": ["integer", "null"]}, "signal": {"type": ["integer", "null"]},
        "steps": {"type": "object"}, "latest_loss": {"type": ["string", "null"]},
        "findings": {"type": "array"}, "nan_inf": {"type": "array"},
        "checkpoint": {"type": "string"}, "ledger_entry": {"type": ["string", "null"]},
        "message": {"type": "string"},
        "slurm": {"type": "object", "description": "Slurm jobs: job_id, state, reason, nodes, start, end, elapsed, time_limit, exit_code, signal, source (squeue|scontrol|sacct), submit_host, batch_script."}
      }},
    "jobs": {"type": "array", "items": {"type": "object"}},
    "plan": {"type": "object", "description": "action plan: executor, command {argv, cwd, env}, expected_steps; for Slurm batch_script, slurm_settings and settings_file."},
    "environment": {"type": "object", "description": "The fingerprint recorded with a started run, and the probe's anomalies."}
  }
})json");
  return schema;
}

}  // namespace parity::tools
