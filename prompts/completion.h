// Completers shared by the prompts: values read from the repository the client names in
// the `repo` argument, else the server's default. A repository that cannot be read
// completes to nothing (completion has no error channel); prompts/get reports the error.
#pragma once

#include <filesystem>

#include "mcp-server/registry.h"

namespace parity::prompts {

std::filesystem::path RepoFrom(const mcp::json& arguments, const std::filesystem::path& default_repo);

mcp::Completer CompleteBranches(std::filesystem::path default_repo);
mcp::Completer CompleteModels(std::filesystem::path default_repo);
// Configs of the models already chosen in the `models` argument (all models when none).
mcp::Completer CompleteConfigs(std::filesystem::path default_repo);
// *.json files (two levels deep) under the repository, relative to it.
mcp::Completer CompleteJsonFiles(std::filesystem::path default_repo);
mcp::Completer CompleteFixed(std::vector<std::string> values);

}  // namespace parity::prompts
