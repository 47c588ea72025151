// The subcommands of the parity binary. Each returns the process exit code:
// 0 ok, 1 the tool (or server) failed, 2 bad usage.
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int ToolsCommand(const std::vector<std::string>& args);
int CallCommand(const std::vector<std::string>& args);
int ServeCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
