// The MCP prompts that are parity's slash commands: `premerge-accuracy-check` (the nine-step
// pre-merge skill) and `precision-comparer` (the root-cause hunt). Their arguments complete
// from the repository (branch names, model names, registered config names). prompts/get
// asks the skill's confirmation checklist and the config-matrix choice through elicitation
// when the client can answer; otherwise the returned prompt lists them as pending
// confirmations the assistant must settle with the user before any step runs.
#pragma once

#include <filesystem>
#include <vector>

#include "mcp-server/registry.h"

namespace parity::prompts {

// `default_repo` is the repository completions and proposals read when the client gives no
// `repo` argument (the server's working directory).
std::vector<mcp::Prompt> AllPrompts(const std::filesystem::path& default_repo);

mcp::Prompt MakePremergePrompt(const std::filesystem::path& default_repo);
mcp::Prompt MakePrecisionComparerPrompt(const std::filesystem::path& default_repo);
// `bisect`: the first commit that changed the numbers (prompts/bisect_prompt.cpp).
mcp::Prompt MakeBisectPrompt(const std::filesystem::path& default_repo);

}  // namespace parity::prompts
