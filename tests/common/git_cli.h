// `git -C repo args...` for tests that build small repositories: a fixed identity, no user
// or system config, the trimmed stdout; a failure fails the calling test with the command
// and its stderr. GitTestEnv() is that environment, for tests that run git (or scripts
// that commit) their own way.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace parity::testing_support {

inline std::map<std::string, std::string> GitTestEnv() {
  return {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.com"}, {"GIT_COMMITTER_NAME", "t"},
          {"GIT_COMMITTER_EMAIL", "t@example.com"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
}

inline std::string Git(const std::filesystem::path& repo, const std::vector<std::string>& args) {
  ProcessOptions o;
  o.argv = {"git", "-C", repo.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env_set = GitTestEnv();
  auto r = RunProcess(o);
  EXPECT_TRUE(r.ok() && r->success()) << ShellQuote(o.argv) << "\n" << (r.ok() ? r->err : r.status().ToString());
  std::string out = r.ok() ? r->out : "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace parity::testing_support
