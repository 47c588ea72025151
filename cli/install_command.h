// `parity install`: registers the server with Claude Code / Claude Desktop and installs
// the skills. Exit 0 done (or nothing to do), 1 failed (files left untouched), 2 bad usage.
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

int InstallCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
