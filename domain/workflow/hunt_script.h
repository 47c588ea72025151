// PrecisionComparer's run_script, made runnable in a parity worktree: split into words (no
// shell ever parses it, so shell syntax is refused with a hint), absolute paths into the
// user's code_path moved into the worktree (the user's tree is never run or written), and
// the step count of a rerun set where the trainer has a known flag for it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

// The words of a run_script; `where` names it in errors ("config.json.test.run_script").
Result<std::vector<std::string>> SplitRunScript(const std::string& script, const std::string& where);

// `path` when it lies outside code_path; otherwise the same place inside the worktree.
// Relative paths are left alone (the run's working directory is the worktree).
std::string MapIntoWorktree(const std::string& path, const std::filesystem::path& code_path,
                            const std::filesystem::path& worktree);

// Every word (and the value of every --flag=VALUE word) mapped with MapIntoWorktree.
std::vector<std::string> MapArgvIntoWorktree(std::vector<std::string> argv, const std::filesystem::path& code_path,
                                             const std::filesystem::path& worktree);

struct StepsFlag {
  size_t index = 0;    // of the word holding the value
  bool joined = false; // --flag=N (else --flag N)
  std::string name;    // --training.steps, --train-iters, ...
  int value = 0;
};

// torchtitan's --training.steps, Megatron's --train-iters (also --train_iters, --max_steps).
std::optional<StepsFlag> FindStepsFlag(const std::vector<std::string>& argv);
std::vector<std::string> WithSteps(std::vector<std::string> argv, const StepsFlag& flag, int steps);

}  // namespace parity::workflow
