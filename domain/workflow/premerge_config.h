// premerge.json: everything `parity premerge` needs, with every confirmation the skill asks
// for answered in advance (`confirm`). Decoding errors name the JSON path
// ("premerge.json: configs[1].name: expected string"); unknown keys are refused.
//
// {
//   "repo": ".", "report_dir": "<repo>/numerical_report",
//   "baseline": "cann/master", "candidate": "HEAD",
//   "model": "toy", "configs": ["toy_small", {"name": "toy_tp2", "extra_args": ["..."]}],
//   "steps": 100, "dataset_path": "data/corpus.txt", "tokenizer": null,
//   "launcher": "torchtitan", "script": null, "env": {}, "timeout_s": 0,
//   "baseline_path": null, "candidate_path": null,
//   "tensorboard": true,               // compare full-precision TensorBoard values (torchtitan)
//   "metrics_file": null,              // or the JSON lines file the trainer writes itself, relative
//                                      // to the worktree (e.g. "outputs/metrics.jsonl"): each run's
//                                      // is moved into <report_dir>/metrics/ and compared instead
//   "compare": {"preset": "premerge", "bitwise": false, "tolerance_abs": null},
//   "report": {"language": "zh", "title": null},
//   "mail": null,                      // render_report's mail object (step 7)
//   "cleanup": true,                   // step 8
//   "executor": "local" | "slurm",     // slurm: the user's ~/.config/parity/slurm.json settings
//   "max_parallel": 1,                 // runs at once (default 1 locally, 16 on Slurm)
//   "stop_at_first_failure": false,    // else a failed run is reported and the others go on
//   "confirm": {"classes": "proposed" | {"path": "A|B|C|ignore"}, "environment_anomalies": false,
//               "config_matrix": false, "mail": false},
//   "noise": {"repeats": 3, "safety_factor": 5},   // calibrated verdict (K >= 3 baseline runs); absent: gate 1
//   "cache": {"enabled": true, "dir": null, "max_bytes": 4294967296}   // the baseline cache
// }
// A config entry may add "resume_at": k (gate 3, resume equivalence: the candidate trained k
// steps, saved, resumed to `steps` must equal its uninterrupted run; case <name>.resume<k>).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

struct MatrixEntry {
  std::string name;                     // registered config name (--config)
  std::vector<std::string> extra_args;  // identical on both sides
  std::optional<int> resume_at;         // gate 3: save at this step and resume (1 <= k < steps)
};

// Gate 1 and the calibrated verdict (domain/logs/noise.h). Without `noise` the baseline runs
// twice and must repeat bit for bit; with it, K >= 3 times and the candidate is judged
// against the K runs' envelope.
struct NoiseConfig {
  int repeats = 0;  // 0: no calibration (gate 1 with two runs)
  double safety_factor = 5.0;  // logs::kDefaultSafetyFactor
};

struct CacheConfig {
  bool enabled = true;
  std::optional<std::filesystem::path> dir;  // default ${XDG_CACHE_HOME:-~/.cache}/parity
  uint64_t max_bytes = uint64_t{4} << 30;
};

struct PremergeConsent {
  bool classes_proposed = false;                            // accept audit_workspace's proposal
  std::optional<std::map<std::string, std::string>> classes;  // or these classes
  bool environment_anomalies = false;  // go on although probe_env reports anomalies
  bool config_matrix = false;          // run the proposed matrix when `configs` is absent
  bool mail = false;                   // send to the addresses in `mail`
  bool stale_worktrees = false;        // remove parity's worktrees of an earlier run in the way
  bool unregistered_configs = false;   // run configs although no registry of them was found
};

struct PremergeConfig {
  std::filesystem::path repo;
  std::filesystem::path report_dir;  // absolute after Resolve
  std::string baseline;
  std::string candidate = "HEAD";
  std::optional<std::string> model;
  std::vector<MatrixEntry> configs;  // empty: the proposal, with consent
  int steps = 100;
  std::optional<std::string> dataset_path, tokenizer, launcher, script;
  std::map<std::string, std::string> env;
  int timeout_s = 0;
  std::optional<std::string> baseline_path, candidate_path;
  bool tensorboard = true;  // default: true for the torchtitan launcher, false for the others
  // The trainer's own full-precision metrics (JSON lines, one object per step), relative to
  // the worktree; set, it replaces TensorBoard and needs max_parallel 1 (one file per worktree).
  std::optional<std::string> metrics_file;
  std::string preset = "premerge";
  bool bitwise = false;
  std::optional<double> tolerance_abs;  // overrides the preset's absolute tolerance
  std::string language = "zh";
  std::optional<std::string> title;
  nlohmann::json mail;  // null: no mail
  bool cleanup = true;
  std::string executor = "local";  // run_training's executor for every training
  int max_parallel = 1;            // trainings at once (fan_out.h)
  bool stop_at_first_failure = false;
  PremergeConsent confirm;
  NoiseConfig noise;
  CacheConfig cache;
};

// `base` resolves relative repo / report_dir (the config file's folder).
Result<PremergeConfig> ParsePremergeConfig(const nlohmann::json& value, const std::string& name,
                                           const std::filesystem::path& base);
Result<PremergeConfig> ReadPremergeConfig(const std::filesystem::path& path);

// The run_training arguments every training of `entry` shares, a premerge's and a bisect's
// alike: {action "start", phase, worktree, config}, the trainer settings (model, launcher,
// script, dataset_path, env, timeout_s), the executor, and extra_args (the entry's, then the
// tokenizer flag). Each workflow adds its own (side, steps, folders, TensorBoard flags).
nlohmann::json TrainingStartArgs(const PremergeConfig& config, const MatrixEntry& entry, const std::string& phase,
                                 const std::string& worktree);

}  // namespace parity::workflow
