#include "domain/workflow/run_worktrees.h"

#include "domain/git/prepare.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Listed(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == paths.size() ? " and " : ", ") + paths[i];
  }
  return out;
}

}  // namespace

WorktreesOutcome RemoveRunWorktrees(const std::function<Result<json>(const json&)>& cleanup, const fs::path& repo,
                                    const std::vector<std::string>& paths, const std::optional<std::string>& kept_because,
                                    const fs::path& report_dir) {
  WorktreesOutcome out;
  const std::string what = paths.size() == 1 ? "the worktree " : "the worktrees ";
  std::vector<fs::path> as_paths(paths.begin(), paths.end());
  // force: a kept worktree holds the run's outputs (and whatever was edited while
  // inspecting it); the user who runs this command means to drop them.
  const std::string command = git::CleanupCommand(repo, as_paths, /*force=*/true, report_dir);
  if (kept_because) {
    out.sentence = what + Listed(paths) + (paths.size() == 1 ? " is" : " are") + " kept (" + *kept_because +
                   "); remove them with: " + command;
    return out;
  }
  json args = {{"action", "cleanup"}, {"repo", repo.string()}, {"paths", paths}};
  auto done = cleanup(args);
  if (done.ok()) {
    out.removed = true;
    out.sentence = what + Listed(paths) + (paths.size() == 1 ? " was" : " were") + " removed";
    return out;
  }
  out.sentence = what + Listed(paths) + (paths.size() == 1 ? " is" : " are") + " kept: removing " +
                 (paths.size() == 1 ? "it" : "them") + " failed (" + done.status().message() +
                 "); remove them with: " + command;
  return out;
}

Status AddToHint(Status status, const std::string& more) {
  std::string hint = status.hint();
  status.WithHint(hint.empty() ? more : hint + "; " + more);
  return status;
}

bool IsStaleWorktreesRefusal(const Status& status) {
  if (status.kind() != ErrorKind::kFailedPrecondition) return false;
  for (const auto& e : status.evidence()) {
    if (e.name == "stale_worktrees") return true;
  }
  return false;
}

Status StaleWorktreesNeedConsent(Status refusal, const std::string& how, const fs::path& repo,
                                 const fs::path& report_dir) {
  std::vector<fs::path> paths;
  for (const auto& e : refusal.evidence()) {
    if (e.name != "stale_worktrees") continue;
    json list = json::parse(e.value, nullptr, false);
    for (const auto& w : list.is_array() ? list : json::array()) {
      if (w.is_object() && w.value("path", json()).is_string()) paths.emplace_back(w["path"].get<std::string>());
    }
  }
  refusal.WithHint(how + " and parity removes them first, or remove them yourself: " +
                   git::CleanupCommand(repo, paths, /*force=*/true, report_dir));
  return refusal;
}

}  // namespace parity::workflow
