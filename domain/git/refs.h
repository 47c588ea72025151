// Resolving the refs the user names, and the stale-fork check: when several remotes carry
// the same branch (origin/master and cann/master), which commit each points at, how they
// diverge, and a refusal to guess which one the user meant by a bare `master`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <git2.h>

#include "support/status.h"

namespace parity::git {

struct CommitInfo {
  std::string ref;      // how the user or the audit named it: "cann/master", "HEAD", a sha
  std::string commit;   // 40 hex
  std::string date;     // committer date of the commit, ISO 8601 UTC
  int64_t time = 0;     // the same, seconds since the epoch
  std::string author;
  std::string summary;  // first line of the message
};

struct RefDivergence {
  std::string a, b;
  size_t a_only = 0;  // commits reachable from a and not from b ("a is ahead by")
  size_t b_only = 0;
  std::optional<std::string> merge_base;  // none when the histories are unrelated
};

// One branch name carried by the local branches and/or several remotes.
struct BranchAcrossRemotes {
  std::string branch;                 // "master"
  std::vector<CommitInfo> refs;       // "master" (local), "origin/master", "cann/master"
  std::vector<RefDivergence> pairs;   // every pair of refs that point at different commits
  bool diverged = false;              // at least two refs point at different commits
  std::string newest;                 // the ref whose tip commit is the newest
};

Result<CommitInfo> DescribeCommit(git_repository* repo, const std::string& name, const git_oid& oid);

// Any revision git understands (branch, remote/branch, tag, sha, HEAD~2), peeled to a commit.
// Unknown: kNotFound naming the spec.
Result<CommitInfo> ResolveCommit(git_repository* repo, const std::string& spec);

// ResolveCommit for the baseline, which must be unambiguous: a bare branch name that the
// local branches and the remotes carry at different commits is refused (kFailedPrecondition)
// with every candidate, its commit and date, so the user picks one (e.g. "cann/master").
Result<CommitInfo> ResolveBaseline(git_repository* repo, const std::string& spec);

// The refs named `branch` locally and on every remote; nullopt when fewer than two exist.
Result<std::optional<BranchAcrossRemotes>> CheckBranchAcrossRemotes(git_repository* repo,
                                                                    const std::string& branch);

Result<RefDivergence> Diverge(git_repository* repo, const CommitInfo& a, const CommitInfo& b);

// Names of the configured remotes, in git's order.
Result<std::vector<std::string>> RemoteNames(git_repository* repo);

}  // namespace parity::git
