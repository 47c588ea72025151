// The history `parity bisect` searches, read with the git command line (read-only: rev-parse,
// rev-list, show; GIT_OPTIONAL_LOCKS=0 so the user's index is never refreshed). Errors carry
// the command, its exit status and git's message.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

struct HistoryCommit {
  std::string commit;                // 40 hex
  std::vector<std::string> parents;  // the first is the first parent
  std::string subject;
  bool merge() const { return parents.size() > 1; }
};

class BisectGit {
 public:
  explicit BisectGit(std::filesystem::path repo) : repo_(std::move(repo)) {}

  // Any revision, peeled to a commit (40 hex); kNotFound naming it otherwise.
  Result<std::string> Resolve(const std::string& rev) const;
  Result<bool> IsAncestor(const std::string& ancestor, const std::string& descendant) const;
  // The first-parent chain of `bad` down to (not including) what `good` reaches, oldest first.
  Result<std::vector<HistoryCommit>> FirstParentRange(const std::string& good, const std::string& bad) const;
  // `git show` of one commit against its first parent: stat and patch, capped at max_bytes.
  Result<std::string> ShowDiff(const std::string& commit, size_t max_bytes = 64 * 1024) const;
  Result<HistoryCommit> Describe(const std::string& commit) const;

 private:
  Result<std::string> Git(const std::vector<std::string>& args, const std::string& what) const;
  std::filesystem::path repo_;
};

}  // namespace parity::workflow
