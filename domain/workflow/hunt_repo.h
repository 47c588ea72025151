// Where `parity hunt` takes each side's code from: a git repository on the side's host (this
// machine, or the SSH host of a remote side), at a commit (its `ref`, or its code_path's
// HEAD). When both sides are local and one repository (the same clone, or worktrees of it),
// worktrees are made from those commits directly; otherwise (a remote side, or two different
// repositories) both trees are copied into a local shadow repository (hunt_shadow.h). The
// user's trees are never run or written; the test tree's uncommitted files are carried by
// audit_workspace's classes, and a baseline tree elsewhere must be clean (a worktree cannot
// carry its edits).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/msprobe/source_locator.h"
#include "domain/run/host.h"
#include "domain/workflow/comparer_config.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct HuntRepo {
  std::filesystem::path repo;  // the test side's top-level folder (or the shadow repository)
  std::string baseline_commit, candidate_commit;
};

// One side's code as found on its host.
struct SideSource {
  std::string where;   // "config.json.test", or "config.json.test (remote root@h:22)": errors start with it
  std::string top;     // the repository's top-level folder on that host
  std::string common;  // its git common dir (two worktrees of one clone share it)
  std::string commit;  // the side's ref (default HEAD)
  std::string head;    // HEAD's commit
  std::string tree;    // the commit's tree id (a copy of the tree must have the same)
};

// `git -C dir args...` on `host`, with GIT_OPTIONAL_LOCKS=0 (the user's index is never
// refreshed); stdout without its trailing newline. A failed git is an error "<what> failed"
// with the command, exit status and stderr.
Result<std::string> HostGit(run::Host& host, const std::string& dir, const std::vector<std::string>& args,
                            const CancellationToken& cancel, const std::string& what,
                            std::chrono::seconds timeout = std::chrono::seconds(120),
                            const std::map<std::string, std::string>& env = {});

// The entries of a NUL-separated listing (`git ls-files -z`, `find -printf '...\0'`).
std::vector<std::string> SplitNul(const std::string& listing);

// How errors name a side: the config's key, and for a remote side its host.
std::string SideWhere(const ComparerConfig& config, const ComparerSide& side, const std::string& key);

Result<SideSource> ResolveSideSource(const ComparerConfig& config, const ComparerSide& side, const std::string& key,
                                     run::Host& host, const CancellationToken& cancel);

// Refused when the baseline's tree has uncommitted changes to tracked files.
Status CheckBaselineClean(run::Host& host, const SideSource& baseline, const CancellationToken& cancel);

// The baseline line of a candidate line, given the file's changed hunks (context 0);
// nullopt when the line was added by the change (no counterpart).
std::optional<int> BaselineLineOf(const std::vector<msprobe::Hunk>& hunks, int candidate_line);

}  // namespace parity::workflow
