// Where `parity hunt` takes each side's code from: both code_paths must be one git
// repository (the same clone, or worktrees of it), each side a commit of it (its `ref`, or
// its code_path's HEAD). Worktrees are made from those commits, so the user's trees are
// never run or written; the test tree's uncommitted files are carried by audit_workspace's
// classes, and a baseline tree elsewhere must be clean (a worktree cannot carry its edits).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "domain/msprobe/source_locator.h"
#include "domain/workflow/comparer_config.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct HuntRepo {
  std::filesystem::path repo;  // the test side's top-level folder
  std::string baseline_commit, candidate_commit;
};

Result<HuntRepo> ResolveHuntRepo(const ComparerConfig& config, const CancellationToken& cancel);

// The baseline line of a candidate line, given the file's changed hunks (context 0);
// nullopt when the line was added by the change (no counterpart).
std::optional<int> BaselineLineOf(const std::vector<msprobe::Hunk>& hunks, int candidate_line);

}  // namespace parity::workflow
