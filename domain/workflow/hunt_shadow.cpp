#include "domain/workflow/hunt_shadow.h"

#include <map>
#include <sstream>

#include "support/safe_file.h"
#include "support/subprocess.h"

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

// Neither the user's nor the system's git configuration (hooks, signing, autocrlf) may change
// what the shadow holds; fixed identities and dates make its commit ids reproducible.
const std::map<std::string, std::string>& ShadowEnv() {
  static const std::map<std::string, std::string> env = {
      {"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"},
      {"GIT_AUTHOR_NAME", "parity"}, {"GIT_AUTHOR_EMAIL", "parity@localhost"},
      {"GIT_COMMITTER_NAME", "parity"}, {"GIT_COMMITTER_EMAIL", "parity@localhost"},
      {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00+0000"}, {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00+0000"}};
  return env;
}

Result<std::string> Shadow(run::Host& local, const fs::path& repo, const std::vector<std::string>& args,
                           const CancellationToken& cancel, const std::string& what) {
  return HostGit(local, repo.string(), args, cancel, "shadow repository " + repo.string() + ": " + what,
                 std::chrono::seconds(600), ShadowEnv());
}

// A relative path from a listing that may be written under the shadow's working tree.
bool SafeRelative(const std::string& p) {
  if (p.empty() || p[0] == '/') return false;
  for (const auto& part : fs::path(p)) {
    if (part == ".." || part == ".git") return false;
  }
  return true;
}

// Removes an earlier shadow and the worktrees made from it (all parity's, beside it).
Status RemoveEarlierShadow(run::Host& local, const fs::path& path, const CancellationToken& cancel) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  if (fs::exists(path / ".git", ec)) {
    auto list = Shadow(local, path, {"worktree", "list", "--porcelain"}, cancel, "git worktree list");
    if (list.ok()) {
      std::istringstream lines(*list);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("worktree ", 0) != 0) continue;
        fs::path wt = line.substr(9);
        fs::path rel = wt.lexically_normal().lexically_relative(path.parent_path().lexically_normal());
        if (wt != path && !rel.empty() && *rel.begin() != "..") fs::remove_all(wt, ec);
      }
    }
  }
  fs::remove_all(path, ec);
  if (ec) return Unavailable("cannot remove the earlier shadow repository " + path.string() + ": " + ec.message());
  return Status::Ok();
}

// Streams `git archive` of the side's commit from its host and extracts it into `into`.
Status ExtractTree(const ShadowSide& side, const fs::path& tar, const fs::path& into, const CancellationToken& cancel) {
  const std::vector<std::string> argv = {"git", "-C", side.source.top, "archive", "--format=tar", side.source.commit};
  run::ExecOptions o;
  o.timeout = std::chrono::minutes(30);
  o.cancel = cancel;
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};
  const std::string what = side.source.where + ": git archive of " + side.source.commit;
  auto r = side.host->ExecToFile(argv, {tar, uint64_t{32} << 30}, o);
  if (!r.ok()) return std::move(r).take_status().Context(what);
  if (!r->success()) return run::HostCommandFailure(what, *side.host, argv, *r);
  ProcessOptions x;
  x.argv = {"tar", "-x", "--no-same-owner", "-f", tar.string(), "-C", into.string()};
  x.timeout = std::chrono::minutes(30);
  x.cancel = cancel;
  PARITY_ASSIGN_OR_RETURN(ProcessResult t, RunProcess(x));
  std::error_code ec;
  fs::remove(tar, ec);
  if (!t.success()) return ProcessFailure("extracting " + what, x, t);
  return Status::Ok();
}

// Everything in the working tree but .git goes: the next tree is extracted into it.
Status ClearWorkingTree(const fs::path& repo) {
  std::error_code ec;
  for (fs::directory_iterator it(repo, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == ".git") continue;
    fs::remove_all(it->path(), ec);
    if (ec) return Unavailable("cannot clear " + it->path().string() + ": " + ec.message());
  }
  return ec ? Unavailable("cannot list " + repo.string() + ": " + ec.message()) : Status::Ok();
}

struct Committed {
  std::string commit, tree;
  bool exact = false;  // the source's own commit object (same id)
  std::string note;    // why it is not, when the tree was the same
};

std::string Origin(const ShadowSide& s) {
  return s.source.commit + " of " + s.source.top + (s.host->is_local() ? "" : " on " + s.host->Describe());
}

// The working tree as the side's commit under `branch`. When its tree is the source's (the
// usual case), the source's own commit object is copied byte for byte, so the shadow holds
// the very commit id the side's host has (its parents are absent: the shadow is shallow);
// otherwise a commit of parity's, with fixed identities and dates.
Result<Committed> CommitWorkingTree(run::Host& local, const fs::path& repo, const ShadowSide& side,
                                    const std::string& branch, const CancellationToken& cancel) {
  // -f: a tracked file that its own .gitignore matches is still part of the tree.
  PARITY_RETURN_IF_ERROR(Shadow(local, repo, {"add", "-A", "-f", "."}, cancel, "git add").status());
  Committed c;
  PARITY_ASSIGN_OR_RETURN(c.tree, Shadow(local, repo, {"write-tree"}, cancel, "git write-tree"));
  if (c.tree == side.source.tree) {
    const std::vector<std::string> cat = {"git", "-C", side.source.top, "cat-file", "commit", side.source.commit};
    run::ExecOptions o;
    o.cancel = cancel;
    PARITY_ASSIGN_OR_RETURN(ProcessResult raw, side.host->Exec(cat, o));
    if (!raw.success()) return run::HostCommandFailure(side.source.where + ": git cat-file commit", *side.host, cat, raw);
    run::ExecOptions w;
    w.cancel = cancel;
    w.stdin_data = raw.out;
    w.env_set = ShadowEnv();
    const std::vector<std::string> hash = {"git", "-C", repo.string(), "hash-object", "-t", "commit", "-w", "--stdin"};
    PARITY_ASSIGN_OR_RETURN(ProcessResult written, local.Exec(hash, w));
    std::string id = written.out.substr(0, written.out.find('\n'));
    if (written.success() && id == side.source.commit) {
      // Its parents are absent: git must be told, or it reads the commit as damaged.
      Status marked = AppendFileUnder(repo, fs::path(".git") / "shallow", id + "\n");
      if (!marked.ok()) return std::move(marked).Context("marking the shadow's commit as shallow (" + repo.string() + ")");
      c.commit = id;
      c.exact = true;
    } else {  // git's object checks refused the copy (an unusual commit header): parity's own commit
      c.note = side.source.where + ": commit " + side.source.commit.substr(0, 12) + " could not be copied as it is (" +
               (written.success() ? "it hashes to " + id : LastLines(written.err, 3)) + ")";
    }
  }
  if (!c.exact) {
    PARITY_ASSIGN_OR_RETURN(c.commit, Shadow(local, repo, {"commit-tree", c.tree, "-m", "parity shadow of " + Origin(side)},
                                             cancel, "git commit-tree"));
  }
  PARITY_RETURN_IF_ERROR(Shadow(local, repo, {"update-ref", "refs/heads/" + branch, c.commit}, cancel, "git update-ref").status());
  return c;
}

Status CarryFile(const ShadowSide& test, const CarriedFile& f, const fs::path& repo, uint64_t max_bytes,
                 const CancellationToken& cancel) {
  if (!SafeRelative(f.path)) {
    return InvalidArgument(test.source.where + ": git listed \"" + f.path + "\", which is not a path inside the tree");
  }
  const fs::path to = repo / f.path;
  std::error_code ec;
  fs::remove(to, ec);
  if (f.state == "deleted") return Status::Ok();
  fs::create_directories(to.parent_path(), ec);
  const std::string from = test.source.top + "/" + f.path;
  if (f.mode == "120000") {
    PARITY_ASSIGN_OR_RETURN(ProcessResult r, test.host->Exec({"readlink", "--", from}, {}));
    if (!r.success()) return run::HostCommandFailure(test.source.where + ": readlink " + from, *test.host, {"readlink", from}, r);
    std::string target = r.out;
    while (!target.empty() && target.back() == '\n') target.pop_back();
    fs::create_symlink(target, to, ec);
    if (ec) return Unavailable("cannot create the symlink " + to.string() + ": " + ec.message());
    return Status::Ok();
  }
  run::TransferOptions o;
  o.max_bytes = max_bytes;
  o.cancel = cancel;
  auto copied = run::DownloadFile(*test.host, from, to, o);
  if (!copied.ok()) {
    return std::move(copied).take_status().Context(test.source.where + ": copying the uncommitted file " + f.path)
        .WithHint("commit the file, add it to .gitignore, or remove it; parity copies the test tree's uncommitted "
                  "files (at most " + std::to_string(max_bytes >> 20) + " MiB each)");
  }
  if (f.mode == "100755") fs::permissions(to, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                                          fs::perm_options::add, ec);
  return Status::Ok();
}

}  // namespace

Result<std::vector<CarriedFile>> ParseRawDiff(const std::string& raw) {
  std::vector<CarriedFile> out;
  size_t at = 0;
  while (at < raw.size()) {
    size_t meta_end = raw.find('\0', at);
    if (meta_end == std::string::npos) return InvalidArgument("git diff --raw: a record without its path");
    std::string meta = raw.substr(at, meta_end - at);
    size_t path_end = raw.find('\0', meta_end + 1);
    if (path_end == std::string::npos) path_end = raw.size();
    std::string path = raw.substr(meta_end + 1, path_end - meta_end - 1);
    at = path_end + 1;
    // ":100644 100755 <old sha> <new sha> M"
    std::istringstream words(meta);
    std::string old_mode, new_mode, old_sha, new_sha, status;
    if (!(words >> old_mode >> new_mode >> old_sha >> new_sha >> status) || old_mode.empty() || old_mode[0] != ':') {
      return InvalidArgument("git diff --raw: unexpected record \"" + meta + "\"");
    }
    CarriedFile f;
    f.path = path;
    f.state = status[0] == 'D' ? "deleted" : "modified";
    f.mode = f.state == "deleted" ? old_mode.substr(1) : new_mode;
    out.push_back(f);
  }
  return out;
}

Result<std::vector<CarriedFile>> ListUncommitted(run::Host& host, const SideSource& test,
                                                 const std::vector<std::string>& skip, const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(std::string raw, HostGit(host, test.top, {"diff", "--raw", "-z", "--no-renames", "HEAD"}, cancel,
                                                   test.where + ": git diff --raw HEAD"));
  PARITY_ASSIGN_OR_RETURN(std::vector<CarriedFile> files, ParseRawDiff(raw));
  PARITY_ASSIGN_OR_RETURN(std::string others, HostGit(host, test.top, {"ls-files", "-o", "--exclude-standard", "-z"},
                                                      cancel, test.where + ": git ls-files -o"));
  for (const std::string& p : SplitNul(others)) {
    if (p.back() == '/') continue;  // a nested repository: not part of this tree
    files.push_back({p, "untracked", "100644"});
  }
  std::vector<CarriedFile> kept;
  for (auto& f : files) {
    bool skipped = false;
    for (const auto& prefix : skip) {
      if (!prefix.empty() && (f.path == prefix || f.path.rfind(prefix + "/", 0) == 0)) skipped = true;
    }
    if (!skipped) kept.push_back(std::move(f));
  }
  return kept;
}

Result<ShadowRepo> BuildShadowRepo(const fs::path& path, const ShadowSide& baseline, const ShadowSide& test,
                                   const std::vector<CarriedFile>& carried, const CancellationToken& cancel,
                                   uint64_t max_file_bytes) {
  auto local = run::MakeLocalHost();
  PARITY_RETURN_IF_ERROR(RemoveEarlierShadow(*local, path, cancel));
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Unavailable("cannot create the shadow repository " + path.string() + ": " + ec.message());
  PARITY_RETURN_IF_ERROR(Shadow(*local, path, {"init", "-q", "-b", "parity-candidate"}, cancel, "git init").status());
  PARITY_RETURN_IF_ERROR(Shadow(*local, path, {"config", "core.autocrlf", "false"}, cancel, "git config").status());
  const fs::path tar = path.string() + ".tar";

  ShadowRepo out;
  out.path = path;
  PARITY_RETURN_IF_ERROR(ExtractTree(baseline, tar, path, cancel));
  PARITY_ASSIGN_OR_RETURN(Committed one, CommitWorkingTree(*local, path, baseline, "parity-baseline", cancel));
  PARITY_RETURN_IF_ERROR(ClearWorkingTree(path));
  PARITY_RETURN_IF_ERROR(ExtractTree(test, tar, path, cancel));
  PARITY_ASSIGN_OR_RETURN(Committed two, CommitWorkingTree(*local, path, test, "parity-candidate", cancel));
  out.baseline_commit = one.commit;
  out.baseline_tree = one.tree;
  out.candidate_commit = two.commit;
  out.candidate_tree = two.tree;
  for (const auto* note : {&one.note, &two.note}) {
    if (!note->empty()) out.warnings.push_back(*note + "; the shadow holds parity's own commit of the same tree instead");
  }
  for (const auto* side : {&baseline, &test}) {
    const std::string& tree = side == &baseline ? one.tree : two.tree;
    if (tree != side->source.tree) {
      out.warnings.push_back(side->source.where + ": the shadow copy's tree " + tree.substr(0, 12) + " differs from " +
                             side->source.commit.substr(0, 12) + "'s tree " + side->source.tree.substr(0, 12) +
                             " (export-ignore / export-subst attributes, or submodules, which git archive leaves out); "
                             "the shadow holds parity's own commit " + (side == &baseline ? one.commit : two.commit).substr(0, 12) +
                             " of that tree instead");
    }
  }
  for (const auto& f : carried) {
    if (cancel.cancelled()) return Cancelled("parity hunt was cancelled while copying the test tree's uncommitted files");
    PARITY_RETURN_IF_ERROR(CarryFile(test, f, path, max_file_bytes, cancel));
    out.carried.push_back(f);
  }
  return out;
}

}  // namespace parity::workflow
