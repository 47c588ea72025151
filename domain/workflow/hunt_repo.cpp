#include "domain/workflow/hunt_repo.h"

#include <chrono>

#include "support/subprocess.h"

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

Result<std::string> Git(const fs::path& dir, std::vector<std::string> args, const CancellationToken& cancel,
                        const std::string& what) {
  ProcessOptions o;
  o.argv = {"git", "-C", dir.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.timeout = std::chrono::seconds(60);
  o.cancel = cancel;
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};  // never refresh the user's index
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
  if (!r.success()) return ProcessFailure(what, o, r);
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

struct SideRepo {
  fs::path top, common;
  std::string commit;
};

Result<SideRepo> Side(const ComparerConfig& c, const ComparerSide& side, const std::string& key,
                      const CancellationToken& cancel) {
  const std::string where = c.name + "." + key;
  if (side.mode != "local") {
    return FailedPrecondition(where + ".mode: \"" + side.mode + "\" is not supported by parity hunt yet")
        .WithHint("run the hunt on a machine that has both sides' code (mode \"local\"); remote runs are "
                  "available one by one through run_training");
  }
  if (side.code_path.empty()) {
    return InvalidArgument(where + ".code_path: required by parity hunt (the git repository of that side's code)");
  }
  fs::path path = fs::absolute(side.code_path);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return NotFound(where + ".code_path: " + path.string() + " is not a directory");
  SideRepo out;
  auto top = Git(path, {"rev-parse", "--show-toplevel"}, cancel, where + ".code_path: git rev-parse");
  if (!top.ok()) {
    return std::move(top).take_status().WithHint("parity hunt works in git worktrees of code_path: it must be inside "
                                                 "a git repository");
  }
  out.top = *top;
  PARITY_ASSIGN_OR_RETURN(std::string common, Git(path, {"rev-parse", "--path-format=absolute", "--git-common-dir"},
                                                  cancel, where + ".code_path: git rev-parse"));
  out.common = fs::weakly_canonical(common);
  std::string ref = side.ref.value_or("HEAD");
  auto commit = Git(path, {"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"}, cancel,
                    where + ".ref: git rev-parse");
  if (!commit.ok()) {
    return InvalidArgument(where + (side.ref ? ".ref" : ".code_path") + ": \"" + ref + "\" is not a commit of " +
                           out.top.string())
        .WithHint("give a branch, tag or commit id that exists in that repository");
  }
  out.commit = *commit;
  return out;
}

}  // namespace

Result<HuntRepo> ResolveHuntRepo(const ComparerConfig& c, const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(SideRepo base, Side(c, c.baseline, "baseline", cancel));
  PARITY_ASSIGN_OR_RETURN(SideRepo test, Side(c, c.test, "test", cancel));
  if (base.common != test.common) {
    return FailedPrecondition(c.name + ": baseline.code_path (" + base.top.string() + ") and test.code_path (" +
                              test.top.string() + ") are different git repositories")
        .WithHint("parity hunt compares two commits of one repository (the git hunk comes from their diff): fetch "
                  "the baseline into the test repository and set baseline.code_path to it with baseline.ref");
  }
  if (base.top != test.top) {
    PARITY_ASSIGN_OR_RETURN(std::string dirty, Git(base.top, {"status", "--porcelain", "--untracked-files=no"}, cancel,
                                                   c.name + ".baseline.code_path: git status"));
    if (!dirty.empty()) {
      return FailedPrecondition(c.name + ".baseline.code_path: " + base.top.string() +
                                " has uncommitted changes, which a worktree made from its commit would not have")
          .WithHint("commit them (or point baseline.ref at a commit that has them)")
          .WithEvidence("git status --porcelain", dirty);
    }
  }
  return HuntRepo{test.top, base.commit, test.commit};
}

std::optional<int> BaselineLineOf(const std::vector<msprobe::Hunk>& hunks, int line) {
  int shift = 0;  // old - new, summed over the hunks above the line
  for (const auto& h : hunks) {
    // With context 0, a pure deletion's new_start is the line before it.
    const int new_end = h.new_lines > 0 ? h.new_start + h.new_lines : h.new_start + 1;
    if (h.new_lines > 0 && line >= h.new_start && line < new_end) {
      if (h.old_lines == 0) return std::nullopt;  // an added line
      return h.old_start + std::min(line - h.new_start, h.old_lines - 1);
    }
    if (line >= new_end) shift += h.old_lines - h.new_lines;
  }
  return line + shift;
}

}  // namespace parity::workflow
