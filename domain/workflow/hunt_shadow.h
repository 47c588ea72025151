// The shadow repository of `parity hunt`: both sides' trees as two commits of one local git
// repository, so every local step (audit_workspace's worktrees and uncommitted-file classes,
// msprobe_first_diff's hunks, inject_prints' analysis) works unchanged when a side's code
// lives on an SSH host or the two sides are different repositories. Branch parity-baseline
// holds the baseline's commit, parity-candidate (HEAD) the candidate's: each tree extracted
// from `git archive` of the side's commit streamed from its host, and, when the tree ids
// agree, the side's own commit object copied byte for byte, so the shadow's commits have the
// sides' very ids (their parents are absent: the shadow is shallow, nothing walks history).
// The test tree's uncommitted files are then written into the shadow's working tree, where
// audit_workspace classifies them (and asks for consent) exactly as in the user's own
// repository. Nothing is written on the sides' hosts.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "domain/run/host.h"
#include "domain/workflow/hunt_repo.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

// A file of the test tree that differs from its HEAD.
struct CarriedFile {
  std::string path;   // relative to the tree's top
  std::string state;  // modified | deleted | untracked
  std::string mode = "100644";  // git's: 100644, 100755, 120000 (symlink)
};

// Tracked files changed against HEAD (`git diff --raw HEAD`) and untracked files that are not
// ignored (`git ls-files -o --exclude-standard`), except those under `skip` (relative folder
// prefixes such as the report directory) and nested repositories.
Result<std::vector<CarriedFile>> ListUncommitted(run::Host& host, const SideSource& test,
                                                 const std::vector<std::string>& skip, const CancellationToken& cancel);

struct ShadowSide {
  run::Host* host = nullptr;
  SideSource source;
};

struct ShadowRepo {
  std::filesystem::path path;
  std::string baseline_commit, candidate_commit;  // the sides' own ids (unless a warning says otherwise)
  std::string baseline_tree, candidate_tree;      // their trees
  std::vector<CarriedFile> carried;               // written into the working tree
  std::vector<std::string> warnings;              // a tree that differs from its source's
};

// Builds (or rebuilds: an earlier shadow at `path` and its worktrees are removed) the shadow
// repository. Each carried file is copied from the test tree on its host, at most
// `max_file_bytes` each.
Result<ShadowRepo> BuildShadowRepo(const std::filesystem::path& path, const ShadowSide& baseline, const ShadowSide& test,
                                   const std::vector<CarriedFile>& carried, const CancellationToken& cancel,
                                   uint64_t max_file_bytes = uint64_t{512} << 20);

// Parses `git diff --raw -z` output into carried files (exposed for tests).
Result<std::vector<CarriedFile>> ParseRawDiff(const std::string& raw);

}  // namespace parity::workflow
