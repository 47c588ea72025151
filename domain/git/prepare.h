// Skill step 0, the acting half: the two worktrees at the chosen commits, the class-B files
// copied into both and the class-C files into the candidate (byte for byte, file mode
// kept), infra_files.tar.gz of the class-B files in the report directory, every action in
// the ledger; and step 8, cleanup. The user's working tree is only read.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <git2.h>

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
  CancellationToken cancel;
};

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
