// Small RAII layer over libgit2: owning pointers for its objects, the one-time library
// initialisation, and the conversion of a libgit2 error code into a Status that says what
// parity was doing and what libgit2 said. Everything in domain/git goes through here so no
// raw git_* object leaks and no error code is dropped.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <git2.h>

#include "support/iso_time.h"  // IsoTimeUtc, used with commit times
#include "support/status.h"

namespace parity::git {

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const { if (p) Free(p); }
};
template <typename T, void (*Free)(T*)>
using GitPtr = std::unique_ptr<T, GitDeleter<T, Free>>;

using RepoPtr = GitPtr<git_repository, git_repository_free>;
using ReferencePtr = GitPtr<git_reference, git_reference_free>;
using ObjectPtr = GitPtr<git_object, git_object_free>;
using CommitPtr = GitPtr<git_commit, git_commit_free>;
using TreePtr = GitPtr<git_tree, git_tree_free>;
using DiffPtr = GitPtr<git_diff, git_diff_free>;
using PatchPtr = GitPtr<git_patch, git_patch_free>;
using RemotePtr = GitPtr<git_remote, git_remote_free>;
using StatusListPtr = GitPtr<git_status_list, git_status_list_free>;
using WorktreePtr = GitPtr<git_worktree, git_worktree_free>;
using BlobPtr = GitPtr<git_blob, git_blob_free>;
using IndexPtr = GitPtr<git_index, git_index_free>;
using BranchIteratorPtr = GitPtr<git_branch_iterator, git_branch_iterator_free>;

// Owns a git_strarray's contents.
struct StrArray {
  git_strarray array{nullptr, 0};
  ~StrArray() { git_strarray_dispose(&array); }
};

// Initialises libgit2 once per process (thread-safe; never shut down).
void EnsureLibgit2();

// The Status for a failed libgit2 call: `what` (what parity was doing) plus libgit2's
// own message; kNotFound for GIT_ENOTFOUND, kInvalidArgument for ambiguous specs.
Status GitError(int code, const std::string& what);

// Opens the repository that contains `path` (searching upwards like git does). A path
// that is not inside a repository is kNotFound with a hint.
Result<RepoPtr> OpenRepository(const std::filesystem::path& path);

// The working-tree root of a non-bare repository.
std::filesystem::path WorkdirOf(git_repository* repo);

// Full 40-hex id, and the 7-hex abbreviation used in names and messages.
std::string OidHex(const git_oid& oid);
std::string ShortHex(const git_oid& oid);

}  // namespace parity::git
