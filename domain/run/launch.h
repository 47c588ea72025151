// Turning a launch request into the exact argv of a training. Presets:
//  - torchtitan (default): the pre-merge skill's command lines, verbatim: B1 (one step, HF
//    save of the model only) for phase gen_ckpt, B2 (load the initial checkpoint in HF
//    format, load_only) for phase train;
//  - megatron: --train-iters/--seed/--deterministic-mode, --save/--load for the checkpoint;
//  - custom: the user's template, split into words first and then filled, so a value never
//    becomes more than one argument and no shell ever sees it;
//  - argv: the caller's argv as is.
// Refused before anything runs: --debug.deterministic_warn_only (it lets non-deterministic
// kernels run with a warning, so two runs may differ silently) and any value "None" (the
// CLI parses it as the string "None", not Python None: a trap the skill lists).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::run {

struct LaunchRequest {
  std::string launcher = "torchtitan";  // torchtitan | megatron | custom | argv
  std::string phase = "train";          // train | gen_ckpt
  std::string script;                   // torchtitan default scripts/run_train.sh; megatron: required
  std::string model, config, dataset_path;
  std::optional<int> steps;             // presets default to 100 (gen_ckpt: 1)
  int seed = 42;
  bool deterministic = true;
  bool load_checkpoint = true;          // phase train: start from the initial checkpoint
  std::string checkpoint_dir;           // gen_ckpt: where it ends up; train: what is loaded
  std::string custom_template;          // launcher custom
  std::vector<std::string> argv;        // launcher argv
  std::vector<std::string> extra_args;  // appended to every preset
  // torchtitan: --job.dump_folder, relative to the worktree (empty: the trainer's default
  // ./outputs). Runs side by side in one worktree each need their own, or one run's
  // checkpoint folder is cleared or moved under another.
  std::string dump_folder;
  std::string side, report_dir, worktree;  // for {placeholders} in a custom template
};

struct Launch {
  std::vector<std::string> argv;
  std::optional<int> expected_steps;
  // Where the run leaves the checkpoint that must be moved to checkpoint_dir (relative to
  // the worktree), when the launcher cannot save there directly.
  std::optional<std::string> checkpoint_to_move;
  std::vector<std::string> notes;  // said to the user (e.g. determinism not enforceable)
};

Result<Launch> BuildLaunch(const LaunchRequest& request);

}  // namespace parity::run
