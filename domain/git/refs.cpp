#include "domain/git/refs.h"

#include "domain/git/git_handle.h"

namespace parity::git {

Result<CommitInfo> DescribeCommit(git_repository* repo, const std::string& name, const git_oid& oid) {
  git_commit* raw = nullptr;
  if (int rc = git_commit_lookup(&raw, repo, &oid); rc < 0) {
    return GitError(rc, "reading commit " + OidHex(oid) + " (" + name + ")");
  }
  CommitPtr commit(raw);
  CommitInfo info;
  info.ref = name;
  info.commit = OidHex(oid);
  info.time = git_commit_time(commit.get());
  info.date = IsoTimeUtc(info.time);
  if (const git_signature* a = git_commit_author(commit.get())) {
    info.author = std::string(a->name ? a->name : "") + " <" + (a->email ? a->email : "") + ">";
  }
  const char* summary = git_commit_summary(commit.get());
  info.summary = summary ? summary : "";
  return info;
}

Result<CommitInfo> ResolveCommit(git_repository* repo, const std::string& spec) {
  if (spec.empty()) return InvalidArgument("empty revision");
  git_object* raw = nullptr;
  int rc = git_revparse_single(&raw, repo, spec.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    return NotFound("unknown revision '" + spec + "' in " + WorkdirOf(repo).string())
        .WithHint("name a branch, remote branch (origin/master), tag or commit that `git rev-parse` accepts; "
                  "run `git fetch` first if it only exists on a remote");
  }
  if (rc < 0) return GitError(rc, "resolving revision '" + spec + "'");
  ObjectPtr object(raw);
  git_object* peeled = nullptr;
  if (int prc = git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT); prc < 0) {
    return InvalidArgument("revision '" + spec + "' does not name a commit")
        .WithEvidence("libgit2", git_error_last() ? git_error_last()->message : "");
  }
  ObjectPtr commit(peeled);
  return DescribeCommit(repo, spec, *git_object_id(commit.get()));
}

Result<std::vector<std::string>> RemoteNames(git_repository* repo) {
  StrArray names;
  if (int rc = git_remote_list(&names.array, repo); rc < 0) return GitError(rc, "listing remotes");
  std::vector<std::string> out;
  for (size_t i = 0; i < names.array.count; ++i) out.emplace_back(names.array.strings[i]);
  return out;
}

namespace {

// The commit a full reference name points at, peeled; nullopt when the ref does not exist.
Result<std::optional<git_oid>> RefTarget(git_repository* repo, const std::string& full_name) {
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, repo, full_name.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) return std::optional<git_oid>();
  if (rc < 0) return GitError(rc, "reading " + full_name);
  git_object* raw = nullptr;
  if (int prc = git_object_lookup(&raw, repo, &oid, GIT_OBJECT_ANY); prc < 0) return GitError(prc, "reading " + full_name);
  ObjectPtr obj(raw);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) < 0) return std::optional<git_oid>();
  ObjectPtr commit(peeled);
  return std::optional<git_oid>(*git_object_id(commit.get()));
}

bool StartsWithRemote(const std::string& spec, const std::vector<std::string>& remotes) {
  for (const auto& r : remotes) {
    if (spec.size() > r.size() + 1 && spec.compare(0, r.size() + 1, r + "/") == 0) return true;
  }
  return false;
}

}  // namespace

Result<RefDivergence> Diverge(git_repository* repo, const CommitInfo& a, const CommitInfo& b) {
  git_oid oa, ob;
  git_oid_fromstr(&oa, a.commit.c_str());
  git_oid_fromstr(&ob, b.commit.c_str());
  RefDivergence d;
  d.a = a.ref;
  d.b = b.ref;
  if (int rc = git_graph_ahead_behind(&d.a_only, &d.b_only, repo, &oa, &ob); rc < 0) {
    return GitError(rc, "counting commits between " + a.ref + " and " + b.ref);
  }
  git_oid base;
  int rc = git_merge_base(&base, repo, &oa, &ob);
  if (rc == 0) d.merge_base = OidHex(base);
  else if (rc != GIT_ENOTFOUND) return GitError(rc, "finding the merge base of " + a.ref + " and " + b.ref);
  return d;
}

Result<std::optional<BranchAcrossRemotes>> CheckBranchAcrossRemotes(git_repository* repo,
                                                                    const std::string& branch) {
  PARITY_ASSIGN_OR_RETURN(auto remotes, RemoteNames(repo));
  BranchAcrossRemotes out;
  out.branch = branch;
  auto add = [&](const std::string& display, const std::string& full) -> Status {
    PARITY_ASSIGN_OR_RETURN(auto oid, RefTarget(repo, full));
    if (!oid) return Status::Ok();
    PARITY_ASSIGN_OR_RETURN(auto info, DescribeCommit(repo, display, *oid));
    out.refs.push_back(std::move(info));
    return Status::Ok();
  };
  PARITY_RETURN_IF_ERROR(add(branch, "refs/heads/" + branch));
  for (const auto& r : remotes) PARITY_RETURN_IF_ERROR(add(r + "/" + branch, "refs/remotes/" + r + "/" + branch));
  if (out.refs.size() < 2) return std::optional<BranchAcrossRemotes>();

  const CommitInfo* newest = &out.refs.front();
  for (size_t i = 0; i < out.refs.size(); ++i) {
    if (out.refs[i].time > newest->time) newest = &out.refs[i];
    for (size_t j = i + 1; j < out.refs.size(); ++j) {
      if (out.refs[i].commit == out.refs[j].commit) continue;
      out.diverged = true;
      PARITY_ASSIGN_OR_RETURN(auto d, Diverge(repo, out.refs[i], out.refs[j]));
      out.pairs.push_back(std::move(d));
    }
  }
  out.newest = newest->ref;
  return std::optional<BranchAcrossRemotes>(std::move(out));
}

Result<CommitInfo> ResolveBaseline(git_repository* repo, const std::string& spec) {
  PARITY_ASSIGN_OR_RETURN(auto remotes, RemoteNames(repo));
  // HEAD is never a branch name here, even though remotes carry symbolic <remote>/HEAD refs.
  bool bare_branch_name = spec != "HEAD" && spec.rfind("refs/", 0) != 0 && !StartsWithRemote(spec, remotes) &&
                          spec.find_first_of("~^@:") == std::string::npos;
  if (bare_branch_name) {
    PARITY_ASSIGN_OR_RETURN(auto across, CheckBranchAcrossRemotes(repo, spec));
    if (across && across->diverged) {
      std::string names, lines;
      for (const auto& r : across->refs) {
        names += (names.empty() ? "" : ", ") + r.ref;
        lines += r.ref + " -> " + r.commit.substr(0, 12) + " (" + r.date + ") " + r.summary + "\n";
      }
      for (const auto& p : across->pairs) {
        lines += p.a + " vs " + p.b + ": " + std::to_string(p.a_only) + " ahead, " + std::to_string(p.b_only) +
                 " behind, merge base " + (p.merge_base ? p.merge_base->substr(0, 12) : "none") + "\n";
      }
      return FailedPrecondition("baseline '" + spec + "' is ambiguous: " + names +
                                " point at different commits (a stale fork?)")
          .WithHint("choose the baseline explicitly, e.g. `" + across->refs.back().ref +
                    "`; the newest tip is " + across->newest + ". Run `git fetch --all` first if the "
                    "remote-tracking branches may be out of date")
          .WithEvidence("candidates", lines);
    }
  }
  return ResolveCommit(repo, spec);
}

}  // namespace parity::git
