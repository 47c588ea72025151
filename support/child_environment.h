// Which of parity's own environment variables a child process inherits. RunProcess
// (support/subprocess.h) applies the filter to every child it starts; env_set is always
// applied on top. Installed once at start, before any thread runs, by
// support/policy.h's InstallChildEnvironment; without one a child inherits everything.
#pragma once

#include <string_view>

namespace parity {

using EnvironmentFilter = bool (*)(std::string_view name);
void SetChildEnvironmentFilter(EnvironmentFilter filter);

}  // namespace parity
