#include "domain/git/prepare.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include "domain/git/git_handle.h"
#include "domain/ledger/ledger.h"
#include "support/safe_file.h"
#include "support/subprocess.h"

namespace parity::git {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kTool = "audit_workspace";
constexpr const char* kTarballName = "infra_files.tar.gz";
constexpr uintmax_t kMaxCopiedFileBytes = uintmax_t{256} << 20;

// The bytes and git file mode of one file to copy.
struct Payload {
  std::string bytes;  // file content, or the link target for a symlink
  std::string mode;   // 100644 | 100755 | 120000
  std::string source;
};

Result<Payload> ReadWorkingTreeFile(const fs::path& root, const std::string& rel, const std::string& cls) {
  fs::path file = root / rel;
  struct stat st{};
  if (::lstat(file.c_str(), &st) != 0) {
    return NotFound("class-" + cls + " file " + rel + " no longer exists in the working tree " + root.string())
        .WithHint("run audit_workspace with action=diff again and confirm the classes of the current files");
  }
  Payload p;
  p.source = "working tree";
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    p.bytes = fs::read_symlink(file, ec).string();
    if (ec) return Unavailable("reading symlink " + file.string() + ": " + ec.message());
    p.mode = "120000";
    return p;
  }
  if (!S_ISREG(st.st_mode)) return FailedPrecondition("class-" + cls + " path " + rel + " is not a regular file");
  if (static_cast<uintmax_t>(st.st_size) > kMaxCopiedFileBytes) {
    return FailedPrecondition("class-" + cls + " file " + rel + " is larger than 256 MiB; parity copies infra files, not data")
        .WithHint("classify it as ignore and make the data reachable from both worktrees another way");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (!in.good() && !in.eof()) return Unavailable("reading " + file.string());
  p.bytes = ss.str();
  p.mode = (st.st_mode & S_IXUSR) ? "100755" : "100644";
  return p;
}

Result<Payload> ReadCommittedFile(git_repository* repo, const CommitInfo& commit, const std::string& rel) {
  git_object* raw = nullptr;
  if (int rc = git_revparse_single(&raw, repo, (commit.commit + "^{tree}").c_str()); rc < 0) {
    return GitError(rc, "reading the tree of " + commit.ref);
  }
  ObjectPtr tree(raw);
  git_tree_entry* entry = nullptr;
  int rc = git_tree_entry_bypath(&entry, reinterpret_cast<git_tree*>(tree.get()), rel.c_str());
  if (rc == GIT_ENOTFOUND) {
    return NotFound("class-B file " + rel + " does not exist in the candidate " + commit.ref)
        .WithHint("a file deleted by the candidate cannot be copied to the baseline; classify it as A");
  }
  if (rc < 0) return GitError(rc, "finding " + rel + " in " + commit.ref);
  GitPtr<git_tree_entry, git_tree_entry_free> owned(entry);
  git_filemode_t mode = git_tree_entry_filemode(entry);
  if (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE && mode != GIT_FILEMODE_LINK) {
    return FailedPrecondition(rel + " in " + commit.ref + " is not a file (a submodule?)");
  }
  git_blob* raw_blob = nullptr;
  if (int brc = git_blob_lookup(&raw_blob, repo, git_tree_entry_id(entry)); brc < 0) return GitError(brc, "reading " + rel);
  BlobPtr blob(raw_blob);
  Payload p;
  p.bytes.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())), git_blob_rawsize(blob.get()));
  p.mode = mode == GIT_FILEMODE_LINK ? "120000" : mode == GIT_FILEMODE_BLOB_EXECUTABLE ? "100755" : "100644";
  p.source = commit.commit;
  return p;
}

// Writes `p` at worktree/rel. Refuses a path that would leave the worktree through `..` or
// a symlinked folder, so a copy can never land outside parity's worktree.
Result<std::string> WriteInto(const fs::path& worktree, const std::string& rel, const Payload& p) {
  fs::path relative(rel);
  if (relative.is_absolute() || rel.empty()) return InvalidArgument("bad relative path '" + rel + "'");
  fs::path dir = worktree;
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    if (*it == ".." || *it == ".") return InvalidArgument("path '" + rel + "' leaves the worktree");
    if (std::next(it) == relative.end()) break;
    dir /= *it;
    std::error_code ec;
    auto st = fs::symlink_status(dir, ec);
    if (st.type() == fs::file_type::symlink) {
      return FailedPrecondition("cannot copy " + rel + ": " + dir.string() + " is a symlink in the worktree");
    }
    if (st.type() == fs::file_type::not_found) {
      fs::create_directory(dir, ec);
      if (ec) return Unavailable("creating " + dir.string() + ": " + ec.message());
    } else if (st.type() != fs::file_type::directory) {
      return FailedPrecondition("cannot copy " + rel + ": " + dir.string() + " is not a folder in the worktree");
    }
  }
  fs::path dest = worktree / relative;
  std::error_code ec;
  if (fs::symlink_status(dest, ec).type() == fs::file_type::directory) {
    return FailedPrecondition("cannot copy " + rel + ": it is a folder in the worktree");
  }
  fs::remove(dest, ec);
  if (p.mode == "120000") {
    fs::create_symlink(p.bytes, dest, ec);
    if (ec) return Unavailable("creating symlink " + dest.string() + ": " + ec.message());
  } else {
    // Through the one write helper: no symlink followed on the way (the worktree holds the
    // repository's files, links included), the file replaced atomically.
    WriteOptions o;
    o.mode = p.mode == "100755" ? 0755 : 0644;
    PARITY_RETURN_IF_ERROR(WriteFileUnder(worktree, relative, p.bytes, o).Context("copying " + rel));
    auto perms = p.mode == "100755" ? fs::perms(0755) : fs::perms(0644);
    fs::permissions(dest, perms, fs::perm_options::replace, ec);
    if (ec) return Unavailable("setting the mode of " + dest.string() + ": " + ec.message());
  }
  git_oid oid;
  if (int rc = git_odb_hash(&oid, p.bytes.data(), p.bytes.size(), GIT_OBJECT_BLOB); rc < 0) {
    return GitError(rc, "hashing " + rel);
  }
  return OidHex(oid);
}

ledger::Entry NewEntry(std::string action) {
  ledger::Entry e;
  e.tool = kTool;
  e.action = std::move(action);
  return e;
}

bool IsInside(const fs::path& child, const fs::path& parent) {
  auto rel = child.lexically_relative(parent);
  return !rel.empty() && *rel.begin() != "..";
}

json GitJson(git_repository* repo, const CommitInfo& c, const fs::path& worktree) {
  return {{"repo", WorkdirOf(repo).string()}, {"ref", c.ref}, {"commit", c.commit}, {"worktree", worktree.string()}};
}

}  // namespace

fs::path DefaultWorktreePath(git_repository* repo, const std::string& side) {
  fs::path root = WorkdirOf(repo);
  return root.parent_path() / (root.filename().string() + "-" + side);
}

std::pair<fs::path, fs::path> WorktreePaths(git_repository* repo, const PrepareRequest& req) {
  auto resolve = [&](const fs::path& given, const char* side) {
    return fs::weakly_canonical(fs::absolute(given.empty() ? DefaultWorktreePath(repo, side) : given));
  };
  return {resolve(req.baseline_path, "baseline"), resolve(req.candidate_path, "candidate")};
}

Result<std::vector<StaleWorktree>> FindStaleWorktrees(git_repository* repo, const std::vector<fs::path>& paths) {
  PARITY_ASSIGN_OR_RETURN(auto all, ListWorktrees(repo));
  std::vector<StaleWorktree> out;
  std::set<std::string> seen;
  for (const auto& requested : paths) {
    std::error_code ec;
    const fs::path path = fs::weakly_canonical(fs::absolute(requested), ec);
    bool registered_here = false;
    for (const auto& w : all) {
      const bool same_path = fs::weakly_canonical(w.path, ec) == path || w.path == path;
      if (!same_path && w.name != path.filename().string()) continue;
      registered_here = registered_here || same_path;
      if (!w.parity_owned) {
        return FailedPrecondition("worktree path " + path.string() + " is taken by the worktree " + w.path.string() +
                                  " (.git/worktrees/" + w.name + "), which parity did not make; parity never removes it")
            .WithHint("choose another path (baseline_path / candidate_path), or remove that worktree yourself "
                      "(`git worktree remove " + w.path.string() + "`) if you mean to");
      }
      if (!seen.insert(w.name).second) continue;
      StaleWorktree stale{w, {}};
      if (w.valid) {
        auto changes = UnrecordedChanges(repo, w, 20);
        if (!changes.ok()) return std::move(changes).take_status().Context("reading the earlier worktree " + w.path.string());
        stale.changes = std::move(changes).value();
      }
      out.push_back(std::move(stale));
    }
    if (!registered_here && fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
      return FailedPrecondition("worktree path " + path.string() + " already exists and is not a worktree parity made "
                                "in " + WorkdirOf(repo).string() + " (no worktree of it is registered there with "
                                "parity's mark); parity never removes or reuses it")
          .WithHint("move or remove it yourself, or pass another path (baseline_path / candidate_path)");
    }
  }
  return out;
}

nlohmann::json StaleJson(const std::vector<StaleWorktree>& stale) {
  json list = json::array();
  for (const auto& s : stale) {
    const WorktreeInfo& w = s.worktree;
    list.push_back({{"path", w.path.string()}, {"name", w.name}, {"side", w.side.value_or("")},
                    {"commit", w.commit.value_or("")}, {"created_at", w.created_at.value_or("")},
                    {"creator_pid", w.creator_pid}, {"creator_running", w.creator_running},
                    {"folder_exists", w.valid}, {"locked", w.locked}, {"changes", s.changes}});
  }
  return list;
}

std::string CleanupCommand(const fs::path& repo, const std::vector<fs::path>& paths, bool force, const fs::path& report_dir) {
  json args = {{"action", "cleanup"}, {"repo", repo.string()}, {"paths", json::array()}};
  for (const auto& p : paths) args["paths"].push_back(p.string());
  if (force) args["force"] = true;
  if (!report_dir.empty()) args["report_dir"] = report_dir.string();
  // `parity call` reads and writes only the folders the user's policy names: these two.
  std::vector<std::string> argv = {"parity", "call", "audit_workspace", args.dump(), "--allow-folder", repo.string()};
  if (!report_dir.empty()) argv.insert(argv.end(), {"--allow-folder", report_dir.string()});
  return ShellQuote(argv);
}

Status StaleWorktreesInTheWay(git_repository* repo, const std::vector<StaleWorktree>& stale, const fs::path& report_dir) {
  std::string list;
  std::vector<fs::path> paths;
  for (const auto& s : stale) {
    const WorktreeInfo& w = s.worktree;
    paths.push_back(w.path);
    list += (list.empty() ? "" : "; ") + w.path.string() + " (" + w.side.value_or("?") + " at " +
            w.commit.value_or("?").substr(0, 12) + (w.created_at ? ", made " + *w.created_at : "") +
            (w.creator_pid ? " by process " + std::to_string(w.creator_pid) +
                                 (w.creator_running ? ", still running" : ", no longer running")
                           : "") +
            (w.valid ? "" : ", its folder is gone") +
            (s.changes.empty() ? "" : ", " + std::to_string(s.changes.size()) + (s.changes.size() >= 20 ? "+" : "") +
                                          " changed file(s) that removing it discards") + ")";
  }
  return FailedPrecondition("parity's own worktree(s) of an earlier run of " + WorkdirOf(repo).string() +
                            " stand where this run's go: " + list + "; nothing was removed or created")
      .WithHint("confirm their removal (remove_stale=true) and parity removes them first, or remove them yourself: " +
                CleanupCommand(WorkdirOf(repo), paths, true, report_dir))
      .WithEvidence("stale_worktrees", StaleJson(stale).dump(2));
}

Status ValidateClasses(const Classification& classification, const std::map<std::string, std::string>& classes) {
  std::set<std::string> known;
  for (const auto& f : classification.files) {
    known.insert(f.path);
    auto it = classes.find(f.path);
    if (it == classes.end()) return InvalidArgument("no class confirmed for " + f.path);
    if (std::find(f.allowed.begin(), f.allowed.end(), it->second) == f.allowed.end()) {
      std::string allowed;
      for (const auto& a : f.allowed) allowed += (allowed.empty() ? "" : ", ") + a;
      Status s = InvalidArgument("class '" + it->second + "' is not possible for " + f.path + " (" +
                                 OriginName(f.origin) + ", " + f.change + "); choose one of: " + allowed);
      if (f.change == "deleted" && (it->second == "B" || it->second == "C")) {
        s = NotFound("class-" + it->second + " file " + f.path + " no longer exists (deleted in " +
                     (f.origin == ChangeOrigin::kCommitted ? "the candidate" : "the working tree") + ")")
                .WithHint("choose one of: " + allowed);
      }
      return s;
    }
  }
  for (const auto& [path, cls] : classes) {
    if (!known.count(path)) {
      return InvalidArgument("'" + path + "' is not among the changed files of " + classification.baseline.ref +
                             ".." + classification.candidate.ref + " or the working tree")
          .WithHint("use the paths listed by action=diff");
    }
  }
  return Status::Ok();
}

Result<PrepareOutcome> PrepareWorktrees(git_repository* repo, const PrepareRequest& req) {
  const Classification& cl = req.classification;
  PARITY_RETURN_IF_ERROR(ValidateClasses(cl, req.classes));
  fs::path root = WorkdirOf(repo);
  // Named copies, not a structured binding: clang before 16 cannot capture those in a lambda.
  const auto paths = WorktreePaths(repo, req);
  const fs::path base_path = paths.first;
  const fs::path cand_path = paths.second;
  if (base_path == cand_path) return InvalidArgument("baseline_path and candidate_path are the same folder " + base_path.string());
  for (const auto& p : {base_path, cand_path}) {
    if (IsInside(p, fs::weakly_canonical(root)) || p == fs::weakly_canonical(root)) {
      return InvalidArgument("worktree path " + p.string() + " is inside the working tree " + root.string())
          .WithHint("parity never writes into your working tree; choose a path outside it (the default is beside it)");
    }
  }
  PARITY_ASSIGN_OR_RETURN(auto stale, FindStaleWorktrees(repo, {base_path, cand_path}));
  std::vector<RemovedWorktree> removed_stale;
  if (!stale.empty()) {
    if (!req.remove_stale) return StaleWorktreesInTheWay(repo, stale, req.report_dir);
    CleanupRequest cleanup{{}, /*force=*/true, req.report_dir};
    for (const auto& s : stale) {
      const WorktreeInfo& w = s.worktree;
      // Another parity run still holds it (the same process id and start time): its
      // training may be running there right now.
      if (w.creator_running && w.creator_pid != ::getpid()) {
        return FailedPrecondition("the earlier worktree " + w.path.string() + " was made by parity process " +
                                  std::to_string(w.creator_pid) + ", which is still running; it may be in use")
            .WithHint("let that run finish (or stop it), or remove the worktree yourself: " +
                      CleanupCommand(root, {w.path}, true, req.report_dir));
      }
      if (w.locked) {
        return FailedPrecondition("the earlier worktree " + w.path.string() + " is locked (`git worktree lock`)")
            .WithHint("unlock it (`git worktree unlock " + w.path.string() + "`) if it may go, then run again");
      }
      cleanup.paths.push_back(w.path);
    }
    PARITY_ASSIGN_OR_RETURN(auto done, CleanupWorktrees(repo, cleanup));
    removed_stale = std::move(done.removed);
  }
  for (const auto& p : {base_path, cand_path}) {
    std::error_code ec;
    if (fs::symlink_status(p, ec).type() != fs::file_type::not_found) {
      return FailedPrecondition("worktree path " + p.string() + " already exists")
          .WithHint("run audit_workspace with action=cleanup if parity made it earlier, or pass another path "
                    "(baseline_path / candidate_path); parity never reuses or overwrites a folder");
    }
  }

  // Read every payload before creating anything, so a vanished file refuses cleanly.
  struct Planned {
    std::string path, cls;
    Payload payload;
    bool to_baseline, to_candidate;
  };
  std::vector<Planned> plan;
  for (const auto& f : cl.files) {
    const std::string& cls = req.classes.at(f.path);
    if (cls != "B" && cls != "C") continue;
    Planned p{f.path, cls, {}, cls == "B", true};
    if (f.origin == ChangeOrigin::kCommitted) {
      PARITY_ASSIGN_OR_RETURN(p.payload, ReadCommittedFile(repo, cl.candidate, f.path));
      p.to_candidate = false;  // the candidate commit already has this version
    } else {
      PARITY_ASSIGN_OR_RETURN(p.payload, ReadWorkingTreeFile(root, f.path, cls));
    }
    plan.push_back(std::move(p));
  }
  if (req.cancel.cancelled()) return Cancelled();

  PrepareOutcome out;
  out.removed_stale = std::move(removed_stale);
  PARITY_ASSIGN_OR_RETURN(out.baseline, AddParityWorktree(repo, base_path, cl.baseline, "baseline"));
  auto rollback = [&](Status why) -> Status {
    for (const auto* w : {&out.baseline, &out.candidate}) {
      if (!w->path.empty()) (void)RemoveParityWorktree(repo, w->path, /*force=*/true);
    }
    ledger::Entry e = NewEntry("worktree_add");
    e.side = "both";
    e.inputs = {{"baseline", cl.baseline.ref}, {"candidate", cl.candidate.ref},
                {"baseline_path", base_path.string()}, {"candidate_path", cand_path.string()}};
    e.outcome = {{"status", why.kind() == ErrorKind::kCancelled ? "cancelled" : "failed"},
                 {"message", why.message() + " (worktrees removed again)"}};
    (void)ledger::Append(req.report_dir, e);
    return why;
  };
  auto cand = AddParityWorktree(repo, cand_path, cl.candidate, "candidate");
  if (!cand.ok()) return rollback(std::move(cand).take_status());
  out.candidate = std::move(cand).value();
  if (req.cancel.cancelled()) return rollback(Cancelled());

  std::vector<CopiedFile> base_copies, cand_copies;
  for (const auto& p : plan) {
    CopiedInfra c{p.path, p.cls, {}, p.payload.source, "", p.payload.mode};
    for (auto [wanted, wt, copies, side] : {std::tuple{p.to_baseline, &out.baseline, &base_copies, "baseline"},
                                            std::tuple{p.to_candidate, &out.candidate, &cand_copies, "candidate"}}) {
      if (!wanted) continue;
      auto blob = WriteInto(wt->path, p.path, p.payload);
      if (!blob.ok()) return rollback(std::move(blob).take_status().Context(std::string("copying into the ") + side + " worktree"));
      c.blob = *blob;
      c.sides.push_back(side);
      copies->push_back({p.path, *blob});
    }
    out.copied.push_back(std::move(c));
  }
  if (Status s = RecordCopiedFiles(repo, out.baseline, base_copies); !s.ok()) return rollback(std::move(s));
  if (Status s = RecordCopiedFiles(repo, out.candidate, cand_copies); !s.ok()) return rollback(std::move(s));

  std::error_code ec;
  fs::create_directories(req.report_dir, ec);
  if (ec) return rollback(Unavailable("creating report directory " + req.report_dir.string() + ": " + ec.message()));

  std::optional<ProcessOptions> tar;
  std::vector<std::string> infra_files;
  for (const auto& p : plan) if (p.cls == "B") infra_files.push_back(p.path);
  if (!infra_files.empty()) {
    // Every class-B file is in the candidate worktree now (copied, or committed there).
    ProcessOptions opts;
    opts.argv = {"tar", "-czf", (fs::absolute(req.report_dir) / kTarballName).string(), "-C", out.candidate.path.string(), "--"};
    opts.argv.insert(opts.argv.end(), infra_files.begin(), infra_files.end());
    opts.timeout = std::chrono::seconds(120);
    opts.cancel = req.cancel;
    auto run = RunProcess(opts);
    if (!run.ok()) return rollback(std::move(run).take_status().Context("writing " + std::string(kTarballName)));
    if (!run->success()) {
      fs::remove(fs::absolute(req.report_dir) / kTarballName, ec);
      return rollback(ProcessFailure("writing " + std::string(kTarballName), opts, *run));
    }
    out.infra_tarball = kTarballName;
    tar = opts;
  }

  for (const auto* w : {&out.baseline, &out.candidate}) {
    const CommitInfo& c = w == &out.baseline ? cl.baseline : cl.candidate;
    ledger::Entry e = NewEntry("worktree_add");
    e.side = *w->side;
    e.git = GitJson(repo, c, w->path);
    e.inputs = {{"ref", c.ref}, {"path", w->path.string()},
                {"equivalent_command", json::array({"git", "worktree", "add", "--detach", w->path.string(), c.commit})}};
    e.outcome = {{"status", "ok"}, {"message", "worktree at " + c.commit.substr(0, 12) + " (" + c.ref + "), HEAD detached"}};
    auto id = ledger::Append(req.report_dir, e);
    // Worktrees the ledger does not know of would be invisible to reproduce: undo them.
    if (!id.ok()) return rollback(std::move(id).take_status().Context("recording in the ledger"));
    out.ledger_entries.push_back(*id);
  }
  if (!out.copied.empty()) {
    ledger::Entry e = NewEntry("infra_copy");
    e.side = "both";
    e.git = {{"repo", root.string()}, {"baseline", cl.baseline.commit}, {"candidate", cl.candidate.commit},
             {"baseline_worktree", out.baseline.path.string()}, {"candidate_worktree", out.candidate.path.string()}};
    json files = json::array();
    for (const auto& c : out.copied) {
      files.push_back({{"path", c.path}, {"class", c.cls}, {"sides", c.sides}, {"source", c.source},
                       {"blob", c.blob}, {"mode", c.mode}});
    }
    e.inputs = {{"files", files}};
    if (tar) {
      e.command = ledger::Command{tar->argv, root.string(), {}, "local"};
      e.outputs = {{"infra_tarball", kTarballName}};
    }
    e.outcome = {{"status", "ok"}, {"message", std::to_string(out.copied.size()) + " file(s) copied"}};
    auto id = ledger::Append(req.report_dir, e);
    // Worktrees the ledger does not know of would be invisible to reproduce: undo them.
    if (!id.ok()) return rollback(std::move(id).take_status().Context("recording in the ledger"));
    out.ledger_entries.push_back(*id);
  }
  return out;
}

Result<CleanupOutcome> CleanupWorktrees(git_repository* repo, const CleanupRequest& req) {
  std::vector<fs::path> paths = req.paths;
  if (paths.empty()) {
    PARITY_ASSIGN_OR_RETURN(auto all, ListWorktrees(repo));
    for (const auto& w : all) if (w.parity_owned) paths.push_back(w.path);
    if (paths.empty()) {
      return NotFound("no parity worktrees are registered in " + WorkdirOf(repo).string())
          .WithHint("`git worktree list` shows what exists; nothing to clean up");
    }
  }
  CleanupOutcome out;
  for (const auto& p : paths) {
    PARITY_ASSIGN_OR_RETURN(auto removed, RemoveParityWorktree(repo, p, req.force));
    ledger::Entry e = NewEntry("cleanup");
    e.git = {{"repo", WorkdirOf(repo).string()}, {"worktree", removed.path.string()}};
    json cmd = json::array({"git", "worktree", "remove"});
    if (req.force) cmd.push_back("--force");
    cmd.push_back(removed.path.string());
    e.inputs = {{"force", req.force}, {"equivalent_command", cmd}};
    e.outcome = {{"status", "ok"}, {"message", "removed " + removed.path.string()}, {"discarded", removed.discarded}};
    PARITY_ASSIGN_OR_RETURN(auto id, ledger::Append(req.report_dir, e));
    out.ledger_entries.push_back(id);
    out.removed.push_back(std::move(removed));
  }
  return out;
}

}  // namespace parity::git
