// The user's policy for `parity serve` and the CLI verbs: the flags every verb takes
// (--policy FILE instead of ${XDG_CONFIG_HOME:-~/.config}/parity/policy.json, --allow-folder
// DIR, repeatable), loading it (support/policy.h) with the working directory and the
// verb's report directory allowed, installing its child-environment allow-list, and the
// terminal prompt that asks the user (never with --yes, never without a terminal: then
// only what the policy file allows runs).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/policy.h"
#include "support/status.h"

namespace parity::cli {

struct PolicyFlags {
  std::optional<std::filesystem::path> file;
  std::vector<std::filesystem::path> folders;
};

// When args[i] is --policy or --allow-folder: consumes it and its value (advancing i) and
// returns true; `error` is set when the value is missing.
bool TakePolicyFlag(const std::vector<std::string>& args, size_t& i, PolicyFlags& flags, std::string& error);

// Loads the policy: built-in rules, the file, the working directory, `folders` (the
// report directory; for premerge/hunt the repositories their config names, which the user
// chose by naming the config) and --allow-folder. Installs the child-environment filter.
Result<std::shared_ptr<policy::Policy>> LoadUserPolicy(const PolicyFlags& flags,
                                                       const std::vector<std::filesystem::path>& folders,
                                                       const std::string& folders_source);

// Asks at the terminal (/dev/tty): the elicitation/create params in, an ElicitResult out.
// Empty (no way to ask) with --yes or when stdin or stderr is not a terminal.
std::function<Result<nlohmann::json>(const nlohmann::json& params)> TerminalPrompt(bool yes);

// `parity policy show [--policy FILE] [--allow-folder DIR]... [--report-dir DIR]`.
int PolicyCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
