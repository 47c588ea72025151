// Skill step 0, the acting half: the two worktrees at the chosen commits, the class-B files
// copied into both and the class-C files into the candidate (byte for byte, file mode
// kept), infra_files.tar.gz of the class-B files in the report directory, every action in
// the ledger; and step 8, cleanup. The user's working tree is only read.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <git2.h>
#include <nlohmann/json.hpp>

#include "domain/git/classify.h"
#include "domain/git/worktrees.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::git {

struct PrepareRequest {
  Classification classification;
  std::map<std::string, std::string> classes;  // path -> A | B | C | ignore, confirmed by the user
  std::filesystem::path baseline_path;         // default: <repo>-baseline beside the repo
  std::filesystem::path candidate_path;        // default: <repo>-candidate
  std::filesystem::path report_dir;
  // The user confirmed removing parity's own worktrees of an earlier run that stand where
  // these two go (FindStaleWorktrees); without it they are an error listing them.
  bool remove_stale = false;
  CancellationToken cancel;
};

// The two worktree paths a request creates (absolute, canonical), baseline first.
std::pair<std::filesystem::path, std::filesystem::path> WorktreePaths(git_repository* repo, const PrepareRequest& request);

// A worktree parity made earlier that stands where a new one goes: registered at that path,
// or under the same admin name (.git/worktrees/<name>, which git derives from the folder's name).
struct StaleWorktree {
  WorktreeInfo worktree;
  std::vector<std::string> changes;  // besides parity's own copies (removing it discards them), at most 20
};

// parity's own worktrees of this repository in the way of `paths`. A path taken by anything
// parity cannot prove it made (a folder, another repository's worktree, a worktree without
// parity's mark) is an error naming it: parity never removes those.
Result<std::vector<StaleWorktree>> FindStaleWorktrees(git_repository* repo, const std::vector<std::filesystem::path>& paths);

// The refusal when stale worktrees are in the way and their removal was not confirmed:
// lists them (evidence "stale_worktrees", a JSON array) and the command that removes them.
Status StaleWorktreesInTheWay(git_repository* repo, const std::vector<StaleWorktree>& stale,
                              const std::filesystem::path& report_dir);
nlohmann::json StaleJson(const std::vector<StaleWorktree>& stale);

// The exact command that removes parity worktrees of `repo` (audit_workspace cleanup, which
// checks parity's mark and records the removal in the report directory's ledger).
std::string CleanupCommand(const std::filesystem::path& repo, const std::vector<std::filesystem::path>& paths, bool force,
                           const std::filesystem::path& report_dir);

struct CopiedInfra {
  std::string path;
  std::string cls;                 // B | C
  std::vector<std::string> sides;  // where it was written
  std::string source;              // "working tree" or "<candidate commit>"
  std::string blob;                // git blob id of the content
  std::string mode;                // "100644", "100755" or "120000" (symlink)
};

struct PrepareOutcome {
  WorktreeInfo baseline, candidate;
  std::vector<RemovedWorktree> removed_stale;  // an earlier run's, removed first (remove_stale)
  std::vector<CopiedInfra> copied;
  std::optional<std::string> infra_tarball;  // relative to report_dir; none without class-B files
  std::vector<std::string> ledger_entries;
};

// `<repo>-baseline` and `<repo>-candidate` beside the repository.
std::filesystem::path DefaultWorktreePath(git_repository* repo, const std::string& side);

// Checks the classes against the classification: every file has one that is allowed for it.
Status ValidateClasses(const Classification& classification, const std::map<std::string, std::string>& classes);

Result<PrepareOutcome> PrepareWorktrees(git_repository* repo, const PrepareRequest& request);

struct CleanupRequest {
  std::vector<std::filesystem::path> paths;  // empty: every worktree parity made for this repo
  bool force = false;
  std::filesystem::path report_dir;
};

struct CleanupOutcome {
  std::vector<RemovedWorktree> removed;
  std::vector<std::string> ledger_entries;
};

Result<CleanupOutcome> CleanupWorktrees(git_repository* repo, const CleanupRequest& request);

}  // namespace parity::git
