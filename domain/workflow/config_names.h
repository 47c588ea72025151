// Which model, config and job file a training command chooses, and whether the commit it
// runs registers them (config_registry.h), checked before any worktree exists: a typo is
// refused at once instead of failing in the training after the worktrees are made. When
// the commit holds no registry parity can read, the check cannot be made; the error says so
// (evidence "no_registry") and the pipeline goes on only with the user's confirmation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/workflow/config_registry.h"
#include "support/status.h"

namespace parity::workflow {

struct ChosenNames {
  std::optional<std::string> model;        // --module M, --model.name M (premerge: "model")
  std::optional<std::string> config;       // --config C, --model.flavor C (premerge: a configs entry)
  std::optional<std::string> config_file;  // --job.config_file F, CONFIG_FILE=F, relative to the run folder
  bool any() const { return model || config || config_file; }
};

// The names in a command's words and environment (the last of a repeated flag wins, as with
// argparse). Both `--flag value` and `--flag=value`.
ChosenNames NamesInCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);

// Checks `names` against one commit's registry. `where` names their source in errors
// ("premerge.json configs[0]", "config.json.test.run_script"), `side` the commit ("the
// baseline 1a2b3c4d5e6f"). InvalidArgument: a name the registry does not hold (the error
// lists what it holds and where it was read); FailedPrecondition with evidence
// "no_registry": nothing to check against.
Status CheckNames(const ChosenNames& names, const std::string& where, const TreeRegistry& registry,
                  const std::string& side);

// Whether `status` is CheckNames' "no registry found".
bool IsNoRegistry(const Status& status);

}  // namespace parity::workflow
