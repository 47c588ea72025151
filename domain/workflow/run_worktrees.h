// What the workflow pipelines (`parity premerge`, `parity hunt`) do with the two worktrees a
// run made, whether it ends well or with an error: remove them through audit_workspace
// cleanup (which removes only worktrees carrying parity's mark), or keep them when the user
// asked to, and say in one sentence which happened, where they are and the exact command
// that removes what is left. And the consent for removing an earlier run's worktrees that
// stand in the way (audit_workspace prepare's remove_stale).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

struct WorktreesOutcome {
  bool removed = false;      // every worktree is gone
  std::string sentence;      // "the worktrees A and B were removed" / "... are kept (why); remove them with: CMD"
};

// `cleanup` calls audit_workspace with the given arguments (the pipeline's StepRunner, which
// adds the report directory). `kept_because`: the user's wish to keep them ("--keep-worktrees").
WorktreesOutcome RemoveRunWorktrees(const std::function<Result<nlohmann::json>(const nlohmann::json&)>& cleanup,
                                    const std::filesystem::path& repo, const std::vector<std::string>& paths,
                                    const std::optional<std::string>& kept_because,
                                    const std::filesystem::path& report_dir);

// `status` with `more` added to its hint ("hint; more").
Status AddToHint(Status status, const std::string& more);

// An audit_workspace prepare refused because parity's worktrees of an earlier run are in the
// way (its evidence "stale_worktrees" names them): the same error, its hint saying how this
// pipeline's user confirms their removal (`how`, e.g. "run again with --yes") and the
// command that removes them.
bool IsStaleWorktreesRefusal(const Status& status);
Status StaleWorktreesNeedConsent(Status refusal, const std::string& how, const std::filesystem::path& repo,
                                 const std::filesystem::path& report_dir);

}  // namespace parity::workflow
