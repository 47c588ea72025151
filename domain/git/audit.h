// The read-only workspace audit (skill step 0): remotes, HEAD and its upstream, the
// staged / unstaged / untracked files, the stash, the worktrees, and the stale-fork check
// for the baseline branch names. Reads only; never refreshes or writes the index.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <git2.h>

#include "domain/git/refs.h"
#include "domain/git/worktrees.h"
#include "support/status.h"

namespace parity::git {

struct RemoteInfo {
  std::string name;
  std::string url;
  std::optional<std::string> push_url;  // only when it differs from url
};

struct HeadInfo {
  bool unborn = false;     // no commit yet
  bool detached = false;
  std::optional<std::string> branch;    // "feature" (local branch name)
  std::optional<CommitInfo> commit;
  std::optional<std::string> upstream;  // "origin/feature"
  std::optional<size_t> ahead, behind;  // relative to the upstream
};

struct FileChange {
  std::string path;
  std::string change;  // added | modified | deleted | renamed | typechange | conflicted | untracked
  std::optional<std::string> old_path;  // for renames
};

struct WorkingState {
  std::vector<FileChange> staged;    // index vs HEAD
  std::vector<FileChange> unstaged;  // working tree vs index
  std::vector<std::string> untracked;
  std::vector<std::string> conflicted;
  bool truncated = false;  // more than the listing limit; lists hold the first ones
  bool clean() const { return staged.empty() && unstaged.empty() && untracked.empty() && conflicted.empty(); }
};

struct StashEntry {
  size_t index = 0;     // stash@{index}
  std::string message;
  std::string commit;
};

struct WorkspaceAudit {
  std::filesystem::path repo_root;
  std::filesystem::path git_dir;  // the common git directory
  HeadInfo head;
  std::vector<RemoteInfo> remotes;
  WorkingState state;
  std::vector<StashEntry> stash;
  std::vector<WorktreeInfo> worktrees;
  // One entry per checked branch name carried by two or more of: the local branches and
  // the remotes. `diverged` ones make a bare baseline name ambiguous.
  std::vector<BranchAcrossRemotes> branches_across_remotes;
  std::optional<std::string> last_fetch;  // mtime of FETCH_HEAD: remote-tracking refs are this old
};

struct AuditOptions {
  // Branch names to run the stale-fork check on; the default checks main and master.
  std::vector<std::string> baseline_branches = {"main", "master"};
  size_t max_listed_files = 2000;
};

Result<WorkspaceAudit> AuditWorkspace(git_repository* repo, const AuditOptions& options);

// The staged / unstaged / untracked files (the status part of the audit).
Result<WorkingState> ReadWorkingState(git_repository* repo, size_t max_listed_files);

}  // namespace parity::git
