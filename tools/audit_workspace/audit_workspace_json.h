// audit_workspace's domain results as the JSON of its outputSchema.
#pragma once

#include <nlohmann/json.hpp>

#include "domain/git/audit.h"
#include "domain/git/classify.h"
#include "domain/git/prepare.h"

namespace parity::tools {

nlohmann::json ToJson(const git::CommitInfo& commit);
nlohmann::json ToJson(const git::WorktreeInfo& worktree);
nlohmann::json ToJson(const git::WorkspaceAudit& audit);
nlohmann::json ToJson(const git::Classification& classification);
nlohmann::json ToJson(const git::PrepareOutcome& outcome);
nlohmann::json ToJson(const git::CleanupOutcome& outcome);

}  // namespace parity::tools
