// The skill's three classes for every changed file, proposed with a reason for the user to
// confirm: A = committed between baseline and candidate (the change under test), B = infra
// both sides need (an uncommitted launcher tweak, a config), C = an uncommitted change only
// the candidate gets. `ignore` keeps an uncommitted file out of both worktrees.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <git2.h>

#include "domain/git/diff.h"
#include "domain/git/refs.h"
#include "support/status.h"

namespace parity::git {

// Where the file's change lives.
enum class ChangeOrigin {
  kCommitted,    // only in baseline..candidate
  kUncommitted,  // only in the working tree (tracked file, staged or not)
  kUntracked,    // a new file git does not track
  kBoth,         // committed, and changed again in the working tree
};
const char* OriginName(ChangeOrigin origin);

struct ClassifiedFile {
  std::string path;
  std::optional<std::string> old_path;
  ChangeOrigin origin = ChangeOrigin::kCommitted;
  std::string change;                   // from the diff: added, modified, deleted, renamed...
  size_t additions = 0, deletions = 0;  // committed diff, else the uncommitted one
  bool binary = false;
  std::string proposed;                 // "A" | "B" | "C" | "ignore"
  std::string reason;
  std::vector<std::string> allowed;     // the classes that mean something for this file
};

struct Classification {
  CommitInfo baseline, candidate;
  DiffStat committed;    // baseline..candidate
  DiffStat uncommitted;  // HEAD vs the working tree
  std::vector<ClassifiedFile> files;  // committed ones first, then uncommitted, in path order
};

struct ClassifyOptions {
  size_t max_files = 5000;
  // Untracked paths under this folder (relative to the repo root, e.g. the report directory
  // when it lives inside the repo) are parity's own output: proposed `ignore`.
  std::optional<std::string> own_output_dir;
};

// Why a path looks like infrastructure (launcher, config, requirements), or nullopt.
std::optional<std::string> InfraReason(std::string_view path);

Result<Classification> ProposeClassification(git_repository* repo, const CommitInfo& baseline,
                                             const CommitInfo& candidate, const ClassifyOptions& options);

}  // namespace parity::git
