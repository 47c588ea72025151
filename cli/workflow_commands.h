// The workflow subcommands: `parity premerge --config premerge.json [--yes]` (the whole
// premerge-accuracy-check skill; exit 0 PASS, 1 FAIL, 2 INCONCLUSIVE, an error, or bad
// usage) and `parity hunt --config config.json [--yes]` (PrecisionComparer's root-cause
// loop; exit 0 no divergence, 1 divergence located, 2 inconclusive, an error, or bad usage).
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

int PremergeCommand(const std::vector<std::string>& args);
int HuntCommand(const std::vector<std::string>& args);
// `parity bisect --config premerge.json [--good REF] [--bad REF]`: exit 0 no change, 1 a
// culprit (or the skipped range holding it) named, 2 undecided, an error, or bad usage.
int BisectCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
