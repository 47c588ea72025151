// The workflow subcommands: `parity premerge --config premerge.json [--yes]` (the whole
// premerge-accuracy-check skill) and `parity hunt` (not built yet: see docs/workflows.md).
// Exit status: 0 PASS, 1 FAIL, 2 INCONCLUSIVE, an error, or bad usage.
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

int PremergeCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
