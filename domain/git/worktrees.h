// parity's own worktrees: created at a commit with a detached HEAD (so the user's branches
// are never checked out elsewhere or moved), registered where `git worktree list` sees
// them, marked as parity's with a small file in their admin folder
// (.git/worktrees/<name>/parity.json, which `git worktree remove` deletes with the rest;
// it also names the process that made the worktree, so a later run can tell a worktree
// still in use from one left behind), and removed only when that mark is present.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <git2.h>

#include "domain/git/refs.h"
#include "support/status.h"

namespace parity::git {

struct WorktreeInfo {
  std::string name;  // its admin folder under .git/worktrees
  std::filesystem::path path;
  bool valid = false;   // the working tree folder still exists
  bool locked = false;
  bool parity_owned = false;
  std::optional<std::string> side;    // baseline | candidate (parity's worktrees)
  std::optional<std::string> commit;  // what parity checked out
  std::optional<std::string> created_at;  // UTC, ISO 8601 (marks written since parity 0.4)
  int creator_pid = 0;                    // the process that made it; 0: not recorded
  bool creator_running = false;           // that very process (pid and start time) still runs
};

// A file parity wrote into one of its worktrees, with the git blob id of what it wrote,
// so cleanup can tell parity's copies from later edits.
struct CopiedFile {
  std::string path;  // relative to the worktree root, '/'-separated
  std::string blob;  // 40-hex git blob id of the content written
};

Result<std::vector<WorktreeInfo>> ListWorktrees(git_repository* repo);

// Creates a worktree at `path` (which must not exist) with HEAD detached at `commit`.
Result<WorktreeInfo> AddParityWorktree(git_repository* repo, const std::filesystem::path& path,
                                       const CommitInfo& commit, const std::string& side);

// Adds `files` to the worktree's record of what parity copied into it.
Status RecordCopiedFiles(git_repository* repo, const WorktreeInfo& worktree,
                         const std::vector<CopiedFile>& files);

struct RemovedWorktree {
  std::filesystem::path path;
  std::string name;
  std::vector<std::string> discarded;  // changes other than parity's copies (force only)
};

// Removes a parity worktree: its folder and its registration. Refuses one parity did not
// create, and one with changes other than parity's own copies unless `force`.
Result<RemovedWorktree> RemoveParityWorktree(git_repository* repo, const std::filesystem::path& path,
                                             bool force);

// Changes in the worktree other than the files parity copied there unchanged (modified or
// untracked, ignored files excluded), at most `limit` of them.
Result<std::vector<std::string>> ForeignChanges(const std::filesystem::path& worktree_path,
                                                const std::vector<CopiedFile>& copied, size_t limit);

// ForeignChanges of one of parity's registered worktrees, against the copies its mark records.
Result<std::vector<std::string>> UnrecordedChanges(git_repository* repo, const WorktreeInfo& worktree, size_t limit);

// The git blob id of a file's current content (what `git hash-object` prints).
Result<std::string> HashFileAsBlob(const std::filesystem::path& file);

}  // namespace parity::git
