#include "tools/audit_workspace/audit_workspace_json.h"

namespace parity::tools {
using json = nlohmann::json;

namespace {

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json ChangeJson(const git::FileChange& c) {
  json j = {{"path", c.path}, {"change", c.change}};
  if (c.old_path) j["old_path"] = *c.old_path;
  return j;
}

json StatJson(const git::DiffStat& s) {
  return {{"files", s.files.size()}, {"additions", s.additions}, {"deletions", s.deletions}, {"truncated", s.truncated}};
}

json RemovedJson(const std::vector<git::RemovedWorktree>& list) {
  json removed = json::array();
  for (const auto& r : list) removed.push_back({{"path", r.path.string()}, {"name", r.name}, {"discarded", r.discarded}});
  return removed;
}

}  // namespace

json ToJson(const git::CommitInfo& c) {
  return {{"ref", c.ref}, {"commit", c.commit}, {"date", c.date}, {"author", c.author}, {"summary", c.summary}};
}

json ToJson(const git::WorktreeInfo& w) {
  return {{"name", w.name}, {"path", w.path.string()}, {"valid", w.valid}, {"locked", w.locked},
          {"parity_owned", w.parity_owned}, {"side", OrNull(w.side)}, {"commit", OrNull(w.commit)}};
}

json ToJson(const git::WorkspaceAudit& a) {
  json head = {{"branch", OrNull(a.head.branch)}, {"detached", a.head.detached}, {"unborn", a.head.unborn},
               {"upstream", OrNull(a.head.upstream)}, {"ahead", OrNull(a.head.ahead)}, {"behind", OrNull(a.head.behind)}};
  if (a.head.commit) head["commit"] = ToJson(*a.head.commit);
  json remotes = json::array();
  for (const auto& r : a.remotes) {
    json j = {{"name", r.name}, {"url", r.url}};
    if (r.push_url) j["push_url"] = *r.push_url;
    remotes.push_back(j);
  }
  json staged = json::array(), unstaged = json::array();
  for (const auto& c : a.state.staged) staged.push_back(ChangeJson(c));
  for (const auto& c : a.state.unstaged) unstaged.push_back(ChangeJson(c));
  json stash = json::array();
  for (const auto& s : a.stash) {
    stash.push_back({{"index", s.index}, {"ref", "stash@{" + std::to_string(s.index) + "}"},
                     {"message", s.message}, {"commit", s.commit}});
  }
  json worktrees = json::array();
  for (const auto& w : a.worktrees) worktrees.push_back(ToJson(w));
  json forks = json::array();
  for (const auto& b : a.branches_across_remotes) {
    json refs = json::array(), pairs = json::array();
    for (const auto& r : b.refs) refs.push_back(ToJson(r));
    for (const auto& p : b.pairs) {
      pairs.push_back({{"a", p.a}, {"b", p.b}, {"a_ahead", p.a_only}, {"b_ahead", p.b_only},
                       {"merge_base", OrNull(p.merge_base)}});
    }
    forks.push_back({{"branch", b.branch}, {"diverged", b.diverged}, {"newest", b.newest},
                     {"choice_required", b.diverged}, {"refs", refs}, {"pairs", pairs}});
  }
  return {{"git_dir", a.git_dir.string()}, {"head", head}, {"remotes", remotes}, {"staged", staged},
          {"unstaged", unstaged}, {"untracked", a.state.untracked}, {"conflicted", a.state.conflicted},
          {"clean", a.state.clean()}, {"truncated", a.state.truncated}, {"stash", stash},
          {"worktrees", worktrees}, {"stale_fork", forks}, {"last_fetch", OrNull(a.last_fetch)}};
}

json ToJson(const git::Classification& c) {
  json files = json::array();
  for (const auto& f : c.files) {
    json j = {{"path", f.path}, {"origin", git::OriginName(f.origin)}, {"change", f.change},
              {"additions", f.additions}, {"deletions", f.deletions}, {"binary", f.binary},
              {"proposed", f.proposed}, {"reason", f.reason}, {"allowed", f.allowed}};
    if (f.old_path) j["old_path"] = *f.old_path;
    files.push_back(std::move(j));
  }
  return {{"baseline", ToJson(c.baseline)}, {"candidate", ToJson(c.candidate)},
          {"committed", StatJson(c.committed)}, {"uncommitted", StatJson(c.uncommitted)}, {"files", files}};
}

json ToJson(const git::PrepareOutcome& o) {
  json copied = json::array();
  for (const auto& c : o.copied) {
    copied.push_back({{"path", c.path}, {"class", c.cls}, {"sides", c.sides}, {"source", c.source},
                      {"blob", c.blob}, {"mode", c.mode}});
  }
  return {{"baseline_worktree", ToJson(o.baseline)}, {"candidate_worktree", ToJson(o.candidate)},
          {"copied", copied}, {"infra_tarball", OrNull(o.infra_tarball)}, {"removed_stale", RemovedJson(o.removed_stale)},
          {"ledger_entries", o.ledger_entries}};
}

json ToJson(const git::CleanupOutcome& o) {
  return {{"removed", RemovedJson(o.removed)}, {"ledger_entries", o.ledger_entries}};
}

}  // namespace parity::tools
