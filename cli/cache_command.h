// `parity cache list|clear [--dir DIR]`: the baseline cache of `parity premerge`.
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

int CacheCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
