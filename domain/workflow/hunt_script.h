// PrecisionComparer's run_script, made runnable in a parity worktree: split into words (no
// shell ever parses it, so shell syntax is refused with a hint), leading `NAME=value` words
// taken as the child's environment (as a shell would, but literally: nothing is expanded),
// absolute paths into the user's code_path moved into the worktree (the user's tree is
// never run or written), and the step count of a rerun set where the trainer has a known
// flag for it.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

// The words of a run_script; `where` names it in errors ("config.json.test.run_script").
Result<std::vector<std::string>> SplitRunScript(const std::string& script, const std::string& where);

// A run_script as a command and the variables it sets for it: `A=1 B=x bash run.sh ...`.
// The leading words NAME=value (NAME as POSIX: [A-Za-z_][A-Za-z0-9_]*) are the environment,
// each value taken literally up to the next blank (no quote removal, no $ or ` expansion:
// `A=$(x)` sets A to the five characters "$(x)"); the rest is SplitRunScript's command.
struct RunScript {
  std::map<std::string, std::string> env;  // a name set twice keeps its last value, as in a shell
  std::vector<std::string> argv;
  // Values holding characters a shell would have interpreted ($ ` ' " \), passed literally.
  std::vector<std::string> literal_values;
};
Result<RunScript> ParseRunScript(const std::string& script, const std::string& where);

// Whether `word` is NAME=value with a POSIX variable name.
bool IsAssignmentWord(const std::string& word);

// `path` when it lies outside code_path; otherwise the same place inside the worktree.
// Relative paths are left alone (the run's working directory is the worktree).
std::string MapIntoWorktree(const std::string& path, const std::filesystem::path& code_path,
                            const std::filesystem::path& worktree);

// Every word (and the value of every --flag=VALUE word) mapped with MapIntoWorktree.
std::vector<std::string> MapArgvIntoWorktree(std::vector<std::string> argv, const std::filesystem::path& code_path,
                                             const std::filesystem::path& worktree);

// Every value mapped with MapIntoWorktree (CONFIG_FILE=/code/train_configs/x.toml).
std::map<std::string, std::string> MapEnvIntoWorktree(std::map<std::string, std::string> env,
                                                      const std::filesystem::path& code_path,
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
