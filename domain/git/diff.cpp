#include "domain/git/diff.h"

#include "domain/git/git_handle.h"

namespace parity::git {

namespace {

// Larger files count as binary and are not read for line counts: an untracked checkpoint
// in the working tree must not make the audit read gigabytes.
constexpr git_off_t kMaxDiffedFileBytes = git_off_t{16} << 20;

const char* DeltaName(git_delta_t status) {
  switch (status) {
    case GIT_DELTA_ADDED: return "added";
    case GIT_DELTA_DELETED: return "deleted";
    case GIT_DELTA_RENAMED: return "renamed";
    case GIT_DELTA_COPIED: return "copied";
    case GIT_DELTA_TYPECHANGE: return "typechange";
    case GIT_DELTA_UNTRACKED: return "untracked";
    default: return "modified";
  }
}

Result<TreePtr> TreeOf(git_repository* repo, const std::string& commit_hex) {
  git_oid oid;
  if (git_oid_fromstr(&oid, commit_hex.c_str()) < 0) return Internal("bad commit id " + commit_hex);
  git_commit* raw = nullptr;
  if (int rc = git_commit_lookup(&raw, repo, &oid); rc < 0) return GitError(rc, "reading commit " + commit_hex);
  CommitPtr commit(raw);
  git_tree* tree = nullptr;
  if (int rc = git_commit_tree(&tree, commit.get()); rc < 0) return GitError(rc, "reading the tree of " + commit_hex);
  return TreePtr(tree);
}

Result<DiffStat> Summarise(git_diff* diff, size_t max_files, const std::string& what) {
  git_diff_find_options find = GIT_DIFF_FIND_OPTIONS_INIT;
  find.flags = GIT_DIFF_FIND_RENAMES;
  if (int rc = git_diff_find_similar(diff, &find); rc < 0) return GitError(rc, "detecting renames in " + what);
  DiffStat stat;
  size_t n = git_diff_num_deltas(diff);
  for (size_t i = 0; i < n; ++i) {
    if (stat.files.size() >= max_files) {
      stat.truncated = true;
      break;
    }
    git_patch* raw = nullptr;
    if (int rc = git_patch_from_diff(&raw, diff, i); rc < 0) return GitError(rc, "computing the diff of " + what);
    PatchPtr patch(raw);
    const git_diff_delta* d = git_diff_get_delta(diff, i);
    FileStat f;
    f.path = d->new_file.path ? d->new_file.path : d->old_file.path;
    f.change = DeltaName(d->status);
    if ((d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED) && d->old_file.path) {
      f.old_path = d->old_file.path;
    }
    f.binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
    if (patch) {
      size_t context = 0;
      if (int rc = git_patch_line_stats(&context, &f.additions, &f.deletions, patch.get()); rc < 0) {
        return GitError(rc, "counting lines of " + f.path);
      }
    }
    stat.additions += f.additions;
    stat.deletions += f.deletions;
    stat.files.push_back(std::move(f));
  }
  return stat;
}

}  // namespace

Result<DiffStat> DiffCommits(git_repository* repo, const CommitInfo& from, const CommitInfo& to, size_t max_files) {
  PARITY_ASSIGN_OR_RETURN(auto a, TreeOf(repo, from.commit));
  PARITY_ASSIGN_OR_RETURN(auto b, TreeOf(repo, to.commit));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.max_size = kMaxDiffedFileBytes;
  git_diff* raw = nullptr;
  if (int rc = git_diff_tree_to_tree(&raw, repo, a.get(), b.get(), &opts); rc < 0) {
    return GitError(rc, "diffing " + from.ref + ".." + to.ref);
  }
  DiffPtr diff(raw);
  return Summarise(diff.get(), max_files, from.ref + ".." + to.ref);
}

Result<DiffStat> DiffUncommitted(git_repository* repo, size_t max_files) {
  TreePtr head_tree;
  if (git_repository_head_unborn(repo) != 1) {
    PARITY_ASSIGN_OR_RETURN(auto head, ResolveCommit(repo, "HEAD"));
    PARITY_ASSIGN_OR_RETURN(head_tree, TreeOf(repo, head.commit));
  }
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  // No GIT_DIFF_UPDATE_INDEX: the user's index is read, never rewritten.
  opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_SHOW_UNTRACKED_CONTENT;
  opts.max_size = kMaxDiffedFileBytes;
  git_diff* raw = nullptr;
  if (int rc = git_diff_tree_to_workdir_with_index(&raw, repo, head_tree.get(), &opts); rc < 0) {
    return GitError(rc, "diffing HEAD against the working tree");
  }
  DiffPtr diff(raw);
  return Summarise(diff.get(), max_files, "the working tree");
}

}  // namespace parity::git
