// `git diff A..B --stat` and its uncommitted counterpart (HEAD against the working tree,
// index included, untracked files as additions): per file the change, the +/- line counts,
// renames and binary files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <git2.h>

#include "domain/git/refs.h"
#include "support/status.h"

namespace parity::git {

struct FileStat {
  std::string path;
  std::optional<std::string> old_path;  // renames and copies
  std::string change;                   // added | modified | deleted | renamed | typechange | untracked
  size_t additions = 0;
  size_t deletions = 0;
  bool binary = false;
};

struct DiffStat {
  std::vector<FileStat> files;  // in path order
  size_t additions = 0;
  size_t deletions = 0;
  bool truncated = false;       // more than max_files changed; `files` holds the first ones
};

// Tree of `from` against tree of `to`, renames detected (what `git diff from..to` shows).
Result<DiffStat> DiffCommits(git_repository* repo, const CommitInfo& from, const CommitInfo& to, size_t max_files);

// HEAD (an empty tree when unborn) against the working tree through the index, with
// untracked files: every change the user has not committed.
Result<DiffStat> DiffUncommitted(git_repository* repo, size_t max_files);

}  // namespace parity::git
