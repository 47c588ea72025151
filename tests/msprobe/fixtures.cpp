#include "tests/msprobe/fixtures.h"

#include <cstdlib>
#include <random>

#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace parity::msprobe::testing {

namespace fs = std::filesystem;

fs::path MsprobeFixtures() {
  std::vector<fs::path> tried;
  if (const char* shared = std::getenv("PARITY_SHARED_DIR")) tried.push_back(fs::path(shared) / "fixtures/msprobe-real");
  tried.push_back(fs::path(PARITY_SOURCE_DIR) / "../shared/fixtures/msprobe-real");
  for (const auto& p : tried) {
    std::error_code ec;
    if (fs::exists(p / "README.md", ec)) return fs::weakly_canonical(p);
  }
  std::string list;
  for (const auto& p : tried) list += " " + p.string();
  ADD_FAILURE() << "msprobe fixtures not found; tried:" << list
                << " (clone the repo beside shared/, or set PARITY_SHARED_DIR)";
  return {};
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("parity-msprobe-" + std::to_string(rd()) + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

int Run(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProcessOptions options;
  options.argv = argv;
  options.cwd = cwd;
  options.timeout = std::chrono::seconds(60);
  options.env_set = {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.com"},
                     {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.com"}};
  auto result = RunProcess(options);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().ToString();
    return -1;
  }
  if (!result->success()) ADD_FAILURE() << ShellQuote(argv) << ": " << result->Describe() << "\n" << result->err;
  return result->exit_code;
}

}  // namespace parity::msprobe::testing
