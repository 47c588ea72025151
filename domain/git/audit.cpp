#include "domain/git/audit.h"

#include <sys/stat.h>

#include <set>

#include "domain/git/git_handle.h"
#include "support/redact.h"

namespace parity::git {
namespace fs = std::filesystem;

namespace {

const char* ChangeName(git_delta_t status) {
  switch (status) {
    case GIT_DELTA_ADDED: return "added";
    case GIT_DELTA_DELETED: return "deleted";
    case GIT_DELTA_RENAMED: return "renamed";
    case GIT_DELTA_TYPECHANGE: return "typechange";
    case GIT_DELTA_COPIED: return "copied";
    case GIT_DELTA_UNTRACKED: return "untracked";
    case GIT_DELTA_CONFLICTED: return "conflicted";
    default: return "modified";
  }
}

FileChange FromDelta(const git_diff_delta* d) {
  FileChange c;
  c.path = d->new_file.path ? d->new_file.path : d->old_file.path;
  c.change = ChangeName(d->status);
  if (d->status == GIT_DELTA_RENAMED && d->old_file.path) c.old_path = d->old_file.path;
  return c;
}

Result<std::vector<RemoteInfo>> ReadRemotes(git_repository* repo) {
  PARITY_ASSIGN_OR_RETURN(auto names, RemoteNames(repo));
  std::vector<RemoteInfo> out;
  for (const auto& name : names) {
    git_remote* raw = nullptr;
    if (int rc = git_remote_lookup(&raw, repo, name.c_str()); rc < 0) return GitError(rc, "reading remote " + name);
    RemotePtr remote(raw);
    RemoteInfo info;
    info.name = name;
    // Shown and recorded only: a token in a remote URL never reaches a result or a record.
    info.url = RedactUrlCredentials(git_remote_url(remote.get()) ? git_remote_url(remote.get()) : "");
    const char* push = git_remote_pushurl(remote.get());
    if (push && info.url != RedactUrlCredentials(push)) info.push_url = RedactUrlCredentials(push);
    out.push_back(std::move(info));
  }
  return out;
}

Result<HeadInfo> ReadHead(git_repository* repo) {
  HeadInfo head;
  head.unborn = git_repository_head_unborn(repo) == 1;
  head.detached = git_repository_head_detached(repo) == 1;
  if (head.unborn) {
    git_reference* raw = nullptr;
    if (git_reference_lookup(&raw, repo, "HEAD") == 0) {
      ReferencePtr h(raw);
      if (const char* target = git_reference_symbolic_target(h.get())) {
        std::string t = target;
        if (t.rfind("refs/heads/", 0) == 0) head.branch = t.substr(11);
      }
    }
    return head;
  }
  git_reference* raw = nullptr;
  if (int rc = git_repository_head(&raw, repo); rc < 0) return GitError(rc, "reading HEAD");
  ReferencePtr ref(raw);
  PARITY_ASSIGN_OR_RETURN(auto commit, ResolveCommit(repo, "HEAD"));
  head.commit = commit;
  if (head.detached) return head;
  head.branch = git_reference_shorthand(ref.get());

  git_reference* raw_up = nullptr;
  int rc = git_branch_upstream(&raw_up, ref.get());
  if (rc == GIT_ENOTFOUND) return head;
  if (rc < 0) return GitError(rc, "reading the upstream of " + *head.branch);
  ReferencePtr up(raw_up);
  head.upstream = git_reference_shorthand(up.get());
  PARITY_ASSIGN_OR_RETURN(auto up_commit, ResolveCommit(repo, git_reference_name(up.get())));
  up_commit.ref = *head.upstream;
  PARITY_ASSIGN_OR_RETURN(auto d, Diverge(repo, commit, up_commit));
  head.ahead = d.a_only;
  head.behind = d.b_only;
  return head;
}

struct StashCollector {
  git_repository* repo;
  std::vector<StashEntry>* out;
};

int CollectStash(size_t index, const char* message, const git_oid* stash_id, void* payload) {
  auto* c = static_cast<StashCollector*>(payload);
  c->out->push_back({index, message ? message : "", OidHex(*stash_id)});
  return 0;
}

}  // namespace

Result<WorkingState> ReadWorkingState(git_repository* repo, size_t max_listed_files) {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  // No GIT_STATUS_OPT_UPDATE_INDEX: the audit must not write the user's index.
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
               GIT_STATUS_OPT_RENAMES_HEAD_TO_INDEX | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY;
  git_status_list* raw = nullptr;
  if (int rc = git_status_list_new(&raw, repo, &opts); rc < 0) return GitError(rc, "reading the working-tree status");
  StatusListPtr list(raw);
  WorkingState state;
  size_t listed = 0;
  for (size_t i = 0, n = git_status_list_entrycount(list.get()); i < n; ++i) {
    if (listed >= max_listed_files) {
      state.truncated = true;
      break;
    }
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    ++listed;
    if (e->status & GIT_STATUS_CONFLICTED) {
      const git_diff_delta* d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
      if (d) state.conflicted.push_back(FromDelta(d).path);
      continue;
    }
    if (e->status & GIT_STATUS_WT_NEW) {
      state.untracked.push_back(e->index_to_workdir->new_file.path);
      continue;
    }
    if (e->head_to_index) state.staged.push_back(FromDelta(e->head_to_index));
    if (e->index_to_workdir) state.unstaged.push_back(FromDelta(e->index_to_workdir));
  }
  return state;
}

Result<WorkspaceAudit> AuditWorkspace(git_repository* repo, const AuditOptions& options) {
  WorkspaceAudit audit;
  audit.repo_root = WorkdirOf(repo);
  audit.git_dir = fs::path(git_repository_commondir(repo)).lexically_normal();
  if (!audit.git_dir.has_filename()) audit.git_dir = audit.git_dir.parent_path();
  PARITY_ASSIGN_OR_RETURN(audit.head, ReadHead(repo));
  PARITY_ASSIGN_OR_RETURN(audit.remotes, ReadRemotes(repo));
  PARITY_ASSIGN_OR_RETURN(audit.state, ReadWorkingState(repo, options.max_listed_files));

  StashCollector collector{repo, &audit.stash};
  int rc = git_stash_foreach(repo, CollectStash, &collector);
  if (rc < 0 && rc != GIT_ENOTFOUND) return GitError(rc, "reading the stash list");

  PARITY_ASSIGN_OR_RETURN(audit.worktrees, ListWorktrees(repo));

  std::set<std::string> checked;
  for (const auto& branch : options.baseline_branches) {
    if (branch.empty() || !checked.insert(branch).second) continue;
    PARITY_ASSIGN_OR_RETURN(auto across, CheckBranchAcrossRemotes(repo, branch));
    if (across) audit.branches_across_remotes.push_back(std::move(*across));
  }

  struct stat st{};
  if (::stat((audit.git_dir / "FETCH_HEAD").c_str(), &st) == 0) audit.last_fetch = IsoTimeUtc(st.st_mtime);
  return audit;
}

}  // namespace parity::git
