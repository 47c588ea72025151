#include "domain/git/worktrees.h"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "domain/git/git_handle.h"
#include "support/json_document.h"
#include "support/safe_file.h"

namespace parity::git {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kMarkerName = "parity.json";

fs::path AdminDir(git_repository* repo, const std::string& name) {
  return fs::path(git_repository_commondir(repo)) / "worktrees" / name;
}

Result<json> ReadMarker(const fs::path& admin) {
  auto text = ReadFileUnder(admin, kMarkerName, 16u << 20);
  if (!text.ok()) {
    if (text.status().kind() == ErrorKind::kNotFound) return NotFound("no parity marker in " + admin.string());
    return std::move(text).take_status();
  }
  auto marker = ParseJsonDocument(*text, (admin / kMarkerName).string());
  if (!marker.ok() || !marker->is_object()) {
    return FailedPrecondition("unreadable parity marker " + (admin / kMarkerName).string());
  }
  return std::move(marker).value();
}

Status WriteMarker(const fs::path& admin, const json& marker) {
  return WriteFileUnder(admin, kMarkerName, marker.dump(2) + "\n");
}

std::vector<CopiedFile> CopiedFromMarker(const json& marker) {
  std::vector<CopiedFile> out;
  if (!marker.contains("copied") || !marker["copied"].is_array()) return out;
  for (const auto& c : marker["copied"]) {
    if (c.is_object() && c.value("path", json()).is_string() && c.value("blob", json()).is_string()) {
      out.push_back({c["path"].get<std::string>(), c["blob"].get<std::string>()});
    }
  }
  return out;
}

// The start time of a process (field 22 of /proc/<pid>/stat, in clock ticks since boot):
// with the pid it names one process, even after the pid is reused.
std::string ProcessStartTime(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return field;
  }
  return "";
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Undoes a half-made worktree: best effort, since we are already reporting an error.
void Rollback(git_repository* repo, const std::string& name, const fs::path& path, const std::string& branch) {
  std::error_code ec;
  fs::remove_all(path, ec);
  fs::remove_all(AdminDir(repo, name), ec);
  git_reference* ref = nullptr;
  if (git_branch_lookup(&ref, repo, branch.c_str(), GIT_BRANCH_LOCAL) == 0) {
    ReferencePtr owned(ref);
    git_branch_delete(owned.get());
  }
}

}  // namespace

Result<std::string> HashFileAsBlob(const fs::path& file) {
  git_oid oid;
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(file, ec))) {
    // git stores a symlink as a blob holding its target.
    std::string target = fs::read_symlink(file, ec).string();
    if (ec) return Unavailable("reading symlink " + file.string() + ": " + ec.message());
    if (int rc = git_odb_hash(&oid, target.data(), target.size(), GIT_OBJECT_BLOB); rc < 0) {
      return GitError(rc, "hashing " + file.string());
    }
    return OidHex(oid);
  }
  if (int rc = git_odb_hashfile(&oid, file.c_str(), GIT_OBJECT_BLOB); rc < 0) {
    return GitError(rc, "hashing " + file.string());
  }
  return OidHex(oid);
}

Result<std::vector<WorktreeInfo>> ListWorktrees(git_repository* repo) {
  StrArray names;
  if (int rc = git_worktree_list(&names.array, repo); rc < 0) return GitError(rc, "listing worktrees");
  std::vector<WorktreeInfo> out;
  for (size_t i = 0; i < names.array.count; ++i) {
    git_worktree* raw = nullptr;
    if (int rc = git_worktree_lookup(&raw, repo, names.array.strings[i]); rc < 0) {
      return GitError(rc, std::string("reading worktree ") + names.array.strings[i]);
    }
    WorktreePtr wt(raw);
    WorktreeInfo info;
    info.name = names.array.strings[i];
    info.path = git_worktree_path(wt.get());
    info.valid = git_worktree_validate(wt.get()) == 0;
    info.locked = git_worktree_is_locked(nullptr, wt.get()) > 0;
    auto marker = ReadMarker(AdminDir(repo, info.name));
    if (marker.ok()) {
      // The mark must also name this very folder: a marker copied beside another worktree
      // (or an admin folder re-pointed at the user's tree) does not make it parity's.
      std::error_code ec;
      info.parity_owned = marker->value("created_by", "") == "parity" && marker->value("path", json()).is_string() &&
                          fs::weakly_canonical((*marker)["path"].get<std::string>(), ec) ==
                              fs::weakly_canonical(info.path, ec);
      if (marker->contains("side") && (*marker)["side"].is_string()) info.side = (*marker)["side"].get<std::string>();
      if (marker->contains("commit") && (*marker)["commit"].is_string()) info.commit = (*marker)["commit"].get<std::string>();
      if (marker->contains("created_at") && (*marker)["created_at"].is_string()) {
        info.created_at = (*marker)["created_at"].get<std::string>();
      }
      const json& process = marker->value("process", json::object());
      if (process.is_object() && process.value("pid", json()).is_number_integer()) {
        info.creator_pid = process["pid"].get<int>();
        const std::string started = process.value("start_time", "");
        info.creator_running = info.creator_pid > 0 && !started.empty() && ProcessStartTime(info.creator_pid) == started;
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<WorktreeInfo> AddParityWorktree(git_repository* repo, const fs::path& requested_path,
                                       const CommitInfo& commit, const std::string& side) {
  std::error_code ec;
  fs::path path = fs::weakly_canonical(fs::absolute(requested_path), ec);
  if (ec) return InvalidArgument("worktree path " + requested_path.string() + ": " + ec.message());
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    return FailedPrecondition("worktree path " + path.string() + " already exists")
        .WithHint("run audit_workspace with action=cleanup if parity made it earlier, or pass another "
                  "path (baseline_path / candidate_path); parity never reuses or overwrites a folder");
  }
  std::string name = path.filename().string();
  if (fs::exists(AdminDir(repo, name), ec)) {
    return FailedPrecondition("a worktree named '" + name + "' is already registered in " +
                              AdminDir(repo, name).parent_path().string())
        .WithHint("run `git worktree list` and `git worktree prune` (or remove it), or choose another path");
  }
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Unavailable("creating " + path.parent_path().string() + ": " + ec.message());

  git_oid oid;
  if (git_oid_fromstr(&oid, commit.commit.c_str()) < 0) return Internal("bad commit id " + commit.commit);
  git_commit* raw_commit = nullptr;
  if (int rc = git_commit_lookup(&raw_commit, repo, &oid); rc < 0) return GitError(rc, "reading " + commit.commit);
  CommitPtr target(raw_commit);

  // libgit2 1.5 cannot add a worktree with a detached HEAD, so it gets a short-lived
  // parity branch that is deleted as soon as the worktree's HEAD is detached.
  std::string temp_branch = "parity/worktree-add-" + ShortHex(oid) + "-" + std::to_string(::getpid());
  git_reference* raw_branch = nullptr;
  if (int rc = git_branch_create(&raw_branch, repo, temp_branch.c_str(), target.get(), 0); rc < 0) {
    return GitError(rc, "creating the temporary branch " + temp_branch);
  }
  ReferencePtr branch(raw_branch);

  git_worktree_add_options opts = GIT_WORKTREE_ADD_OPTIONS_INIT;
  opts.ref = branch.get();
  opts.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
  git_worktree* raw_wt = nullptr;
  if (int rc = git_worktree_add(&raw_wt, repo, name.c_str(), path.c_str(), &opts); rc < 0) {
    Status s = GitError(rc, "creating worktree " + path.string() + " at " + commit.ref);
    branch.reset();
    Rollback(repo, name, path, temp_branch);
    return s;
  }
  WorktreePtr wt(raw_wt);
  git_repository* raw_wt_repo = nullptr;
  Status failure;
  if (int rc = git_repository_open_from_worktree(&raw_wt_repo, wt.get()); rc < 0) {
    failure = GitError(rc, "opening worktree " + path.string());
  } else {
    RepoPtr wt_repo(raw_wt_repo);
    if (int hrc = git_repository_set_head_detached(wt_repo.get(), &oid); hrc < 0) {
      failure = GitError(hrc, "detaching HEAD in " + path.string());
    } else if (int drc = git_branch_delete(branch.get()); drc < 0) {
      failure = GitError(drc, "deleting the temporary branch " + temp_branch);
    }
  }
  branch.reset();
  if (!failure.ok()) {
    Rollback(repo, name, path, temp_branch);
    return failure;
  }

  WorktreeInfo info;
  info.name = name;
  info.path = path;
  info.valid = true;
  info.parity_owned = true;
  info.side = side;
  info.commit = commit.commit;
  info.created_at = UtcNow();
  info.creator_pid = ::getpid();
  info.creator_running = true;
  json marker = {{"created_by", "parity"}, {"side", side}, {"ref", commit.ref}, {"commit", commit.commit},
                 {"path", path.string()}, {"created_at", *info.created_at},
                 {"process", {{"pid", info.creator_pid}, {"start_time", ProcessStartTime(info.creator_pid)}}},
                 {"copied", json::array()}};
  if (Status s = WriteMarker(AdminDir(repo, name), marker); !s.ok()) {
    Rollback(repo, name, path, temp_branch);
    return s;
  }
  return info;
}

Status RecordCopiedFiles(git_repository* repo, const WorktreeInfo& worktree, const std::vector<CopiedFile>& files) {
  fs::path admin = AdminDir(repo, worktree.name);
  PARITY_ASSIGN_OR_RETURN(json marker, ReadMarker(admin));
  json& copied = marker["copied"];
  if (!copied.is_array()) copied = json::array();
  for (const auto& f : files) copied.push_back({{"path", f.path}, {"blob", f.blob}});
  return WriteMarker(admin, marker);
}

Result<std::vector<std::string>> ForeignChanges(const fs::path& worktree_path, const std::vector<CopiedFile>& copied,
                                                size_t limit) {
  git_repository* raw = nullptr;
  if (int rc = git_repository_open(&raw, worktree_path.c_str()); rc < 0) {
    return GitError(rc, "opening worktree " + worktree_path.string());
  }
  RepoPtr repo(raw);
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* raw_list = nullptr;
  if (int rc = git_status_list_new(&raw_list, repo.get(), &opts); rc < 0) {
    return GitError(rc, "reading the status of " + worktree_path.string());
  }
  StatusListPtr list(raw_list);
  std::vector<std::string> foreign;
  for (size_t i = 0, n = git_status_list_entrycount(list.get()); i < n && foreign.size() < limit; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    const git_diff_delta* d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
    if (!d) continue;
    std::string path = d->new_file.path ? d->new_file.path : d->old_file.path;
    bool ours = false;
    for (const auto& c : copied) {
      if (c.path != path) continue;
      auto now = HashFileAsBlob(worktree_path / path);
      ours = now.ok() && *now == c.blob;
    }
    if (!ours) foreign.push_back(path);
  }
  return foreign;
}

Result<std::vector<std::string>> UnrecordedChanges(git_repository* repo, const WorktreeInfo& worktree, size_t limit) {
  PARITY_ASSIGN_OR_RETURN(json marker, ReadMarker(AdminDir(repo, worktree.name)));
  return ForeignChanges(worktree.path, CopiedFromMarker(marker), limit);
}

Result<RemovedWorktree> RemoveParityWorktree(git_repository* repo, const fs::path& requested_path, bool force) {
  std::error_code ec;
  fs::path path = fs::weakly_canonical(fs::absolute(requested_path), ec);
  PARITY_ASSIGN_OR_RETURN(auto all, ListWorktrees(repo));
  const WorktreeInfo* found = nullptr;
  for (const auto& w : all) {
    if (fs::weakly_canonical(w.path, ec) == path || w.path == path) found = &w;
  }
  if (!found) {
    return NotFound(path.string() + " is not a worktree of " + WorkdirOf(repo).string())
        .WithHint("`git worktree list` shows the registered worktrees");
  }
  if (!found->parity_owned) {
    return FailedPrecondition("worktree " + path.string() + " was not created by parity; refusing to remove it")
        .WithHint("remove it yourself with `git worktree remove` if you mean to");
  }
  RemovedWorktree removed;
  removed.path = path;
  removed.name = found->name;
  if (found->valid) {
    PARITY_ASSIGN_OR_RETURN(auto foreign, UnrecordedChanges(repo, *found, 50));
    if (!foreign.empty() && !force) {
      std::string list;
      for (const auto& f : foreign) list += f + "\n";
      return FailedPrecondition("worktree " + path.string() + " has changes parity did not make (" +
                                std::to_string(foreign.size()) + (foreign.size() >= 50 ? "+" : "") + " files)")
          .WithHint("look at them (outputs of a training run, injected prints not reverted?); pass force=true "
                    "to remove the worktree anyway")
          .WithEvidence("changed_files", list);
    }
    removed.discarded = std::move(foreign);
  }
  if (found->locked && !force) {
    return FailedPrecondition("worktree " + path.string() + " is locked").WithHint("pass force=true to remove it anyway");
  }
  git_worktree* raw = nullptr;
  if (int rc = git_worktree_lookup(&raw, repo, found->name.c_str()); rc < 0) {
    return GitError(rc, "reading worktree " + found->name);
  }
  WorktreePtr wt(raw);
  // remove_all does not follow symlinks, so nothing outside the worktree is touched.
  fs::remove_all(path, ec);
  if (ec) return Unavailable("removing " + path.string() + ": " + ec.message());
  git_worktree_prune_options popts = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
  popts.flags = GIT_WORKTREE_PRUNE_VALID;
  if (force) popts.flags |= GIT_WORKTREE_PRUNE_LOCKED;
  if (int rc = git_worktree_prune(wt.get(), &popts); rc < 0) {
    return GitError(rc, "unregistering worktree " + found->name);
  }
  // Like `git worktree prune`, drop .git/worktrees once it is empty, so a full
  // prepare + cleanup cycle leaves the user's .git exactly as it was.
  fs::path admin_root = AdminDir(repo, found->name).parent_path();
  if (fs::is_empty(admin_root, ec)) fs::remove(admin_root, ec);
  return removed;
}

}  // namespace parity::git
