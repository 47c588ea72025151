// A temporary git repository holding a copy of the real toy trainer (examples/toy-trainer),
// committed, plus a report directory beside it: the worktree run_training runs in.
#pragma once

#include <filesystem>
#include <string>

#include "domain/run/jobs.h"

namespace parity::testing {

class ToyRepo {
 public:
  ToyRepo();
  ~ToyRepo();
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path repo() const { return root_ / "repo"; }
  std::filesystem::path report() const { return root_ / "numerical_report"; }
  std::string head() const;  // git rev-parse HEAD

 private:
  std::filesystem::path root_;
};

// The job of a toy trainer run in `toy`'s repository (torchtitan preset, config toy_small,
// the initial checkpoint in <report>/initial_ckpt_toy_small).
run::JobSpec ToyJobSpec(const ToyRepo& toy, const std::string& phase, const std::string& side, int steps);

// Runs `command` to completion through the shell-free process API; stdout.
std::string Capture(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {});

}  // namespace parity::testing
