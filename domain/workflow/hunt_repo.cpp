#include "domain/workflow/hunt_repo.h"

namespace parity::workflow {

Result<std::string> HostGit(run::Host& host, const std::string& dir, const std::vector<std::string>& args,
                            const CancellationToken& cancel, const std::string& what, std::chrono::seconds timeout,
                            const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {"git", "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  run::ExecOptions o;
  o.timeout = timeout;
  o.cancel = cancel;
  o.env_set = env;
  o.env_set["GIT_OPTIONAL_LOCKS"] = "0";  // never refresh the user's index
  auto r = host.Exec(argv, o);
  if (!r.ok()) return std::move(r).take_status().Context(what);
  if (!r->success()) return run::HostCommandFailure(what, host, argv, *r);
  std::string out = r->out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::vector<std::string> SplitNul(const std::string& listing) {
  std::vector<std::string> out;
  for (size_t at = 0; at < listing.size();) {
    size_t end = listing.find('\0', at);
    if (end == std::string::npos) end = listing.size();
    if (end > at) out.push_back(listing.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string SideWhere(const ComparerConfig& c, const ComparerSide& side, const std::string& key) {
  std::string where = c.name + "." + key;
  if (side.mode == "remote" && side.ssh) {
    where += " (remote " + (side.ssh->username.empty() ? "" : side.ssh->username + "@") + side.ssh->host + ":" +
             std::to_string(side.ssh->port) + ")";
  }
  return where;
}

Result<SideSource> ResolveSideSource(const ComparerConfig& c, const ComparerSide& side, const std::string& key,
                                     run::Host& host, const CancellationToken& cancel) {
  SideSource out;
  out.where = SideWhere(c, side, key);
  const std::string field = c.name + "." + key;
  if (side.code_path.empty()) {
    return InvalidArgument(field + ".code_path: required by parity hunt (the git repository of that side's code)");
  }
  std::string path = host.is_local() ? std::filesystem::absolute(side.code_path).string() : side.code_path;
  if (host.is_local()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) return NotFound(field + ".code_path: " + path + " is not a directory");
  }
  auto top = HostGit(host, path, {"rev-parse", "--show-toplevel"}, cancel, out.where + ": git rev-parse in " + path);
  if (!top.ok()) {
    return std::move(top).take_status().WithHint("parity hunt works in git worktrees of code_path: it must be a "
                                                 "folder inside a git repository on that side's host");
  }
  out.top = *top;
  PARITY_ASSIGN_OR_RETURN(std::string common, HostGit(host, path, {"rev-parse", "--path-format=absolute", "--git-common-dir"},
                                                      cancel, out.where + ": git rev-parse"));
  out.common = host.is_local() ? std::filesystem::weakly_canonical(common).string() : common;
  std::string ref = side.ref.value_or("HEAD");
  auto commit = HostGit(host, path, {"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"}, cancel,
                        out.where + ".ref: git rev-parse");
  if (!commit.ok()) {
    return InvalidArgument(field + (side.ref ? ".ref" : ".code_path") + ": \"" + ref + "\" is not a commit of " + out.top +
                           (host.is_local() ? "" : " on " + host.Describe()))
        .WithHint("give a branch, tag or commit id that exists in that repository");
  }
  out.commit = *commit;
  PARITY_ASSIGN_OR_RETURN(out.head, HostGit(host, path, {"rev-parse", "--verify", "HEAD^{commit}"}, cancel,
                                            out.where + ": git rev-parse HEAD"));
  PARITY_ASSIGN_OR_RETURN(out.tree, HostGit(host, path, {"rev-parse", "--verify", out.commit + "^{tree}"}, cancel,
                                            out.where + ": git rev-parse of the commit's tree"));
  return out;
}

Status CheckBaselineClean(run::Host& host, const SideSource& base, const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(std::string dirty, HostGit(host, base.top, {"status", "--porcelain", "--untracked-files=no"},
                                                     cancel, base.where + ".code_path: git status"));
  if (dirty.empty()) return Status::Ok();
  return FailedPrecondition(base.where + ".code_path: " + base.top +
                            " has uncommitted changes, which a worktree made from its commit would not have")
      .WithHint("commit them (or point baseline.ref at a commit that has them)")
      .WithEvidence("git status --porcelain", dirty);
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
