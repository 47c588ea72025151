#include "domain/git/git_handle.h"

#include <ctime>
#include <mutex>

namespace parity::git {

void EnsureLibgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

Status GitError(int code, const std::string& what) {
  const git_error* e = git_error_last();
  std::string detail = (e && e->message) ? e->message : "libgit2 error " + std::to_string(code);
  ErrorKind kind = ErrorKind::kUnavailable;
  if (code == GIT_ENOTFOUND) kind = ErrorKind::kNotFound;
  else if (code == GIT_EAMBIGUOUS || code == GIT_EINVALIDSPEC) kind = ErrorKind::kInvalidArgument;
  else if (code == GIT_EEXISTS || code == GIT_ELOCKED || code == GIT_EUNMERGED) kind = ErrorKind::kFailedPrecondition;
  return Status(kind, what + ": " + detail).WithEvidence("libgit2_error", std::to_string(code));
}

Result<RepoPtr> OpenRepository(const std::filesystem::path& path) {
  EnsureLibgit2();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return NotFound("repository path " + path.string() + " does not exist")
        .WithHint("pass `repo` as the path of a git working tree");
  }
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, path.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) {
    return NotFound(path.string() + " is not inside a git repository")
        .WithHint("pass `repo` as the path of a git working tree (the folder you would run `git status` in)");
  }
  if (rc < 0) return GitError(rc, "opening repository " + path.string());
  RepoPtr repo(raw);
  if (git_repository_is_bare(repo.get())) {
    return FailedPrecondition(path.string() + " is a bare repository; parity needs a working tree")
        .WithHint("pass the path of a non-bare clone");
  }
  return repo;
}

std::filesystem::path WorkdirOf(git_repository* repo) {
  const char* wd = git_repository_workdir(repo);
  std::filesystem::path p = wd ? wd : "";
  // libgit2 ends workdir paths with a slash; drop it so parent_path() is the folder above.
  return p.has_filename() ? p : p.parent_path();
}

std::string OidHex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

std::string ShortHex(const git_oid& oid) { return OidHex(oid).substr(0, 7); }

}  // namespace parity::git
