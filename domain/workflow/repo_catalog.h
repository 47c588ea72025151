// What a training repository offers to choose from: its branches (local and remote-tracking),
// its models and each model's registered configs, for MCP prompt completion in the folder
// the server runs in. Read-only; bounded scans. (The pipelines check names against the
// commits themselves, read through git: config_registry.h.)
//
// Models and configs come from every `config_registry.py` (RegistryParser): the torchtitan(-npu)
// layout `<pkg>/models/<model>/config_registry.py` (configs: its public top-level functions)
// and `MODULES = {"<model>": {"<config>": ...}}` tables (the toy trainer's layout).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

// Branch names as git spells them: "main", "origin/master", "cann/master"; symbolic refs
// (origin/HEAD) left out. Runs `git for-each-ref` with a timeout.
Result<std::vector<std::string>> ListBranches(const std::filesystem::path& repo);

// Files that differ between two revisions (`git diff --name-only a b`), for the matrix proposal.
Result<std::vector<std::string>> ChangedFiles(const std::filesystem::path& repo, const std::string& a,
                                              const std::string& b);

struct ModelCatalog {
  std::map<std::string, std::vector<std::string>> configs;  // model -> registered configs, in file order
  std::vector<std::filesystem::path> registries;            // the config_registry.py files read
};

// Scans `repo` (at most 6 levels deep, skipping hidden and build folders) for config registries.
Result<ModelCatalog> ReadModelCatalog(const std::filesystem::path& repo);

// The configs of `models` (all models when empty), without duplicates.
std::vector<std::string> ConfigsOf(const ModelCatalog& catalog, const std::vector<std::string>& models);

// Completion of a comma-separated list: completes the last item against `choices` and
// returns whole values ("toy,ll" -> "toy,llama3"). At most `limit` values.
std::vector<std::string> CompleteList(std::string_view value, const std::vector<std::string>& choices,
                                      size_t limit = 100);

// Splits "a, b,c" into {"a","b","c"} (empty items dropped).
std::vector<std::string> SplitList(std::string_view value);

}  // namespace parity::workflow
