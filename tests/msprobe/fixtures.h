// Where the real msprobe fixtures are: <repo>/../shared/fixtures/msprobe-real (CI clones the
// repo beside a copy of shared/), or $PARITY_SHARED_DIR/fixtures/msprobe-real.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace parity::msprobe::testing {

// Fails the calling test (ADD_FAILURE) with the paths tried when the folder is missing.
std::filesystem::path MsprobeFixtures();

// A fresh empty temporary folder, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs argv (no shell) in cwd; returns exit status, fails the test on error.
int Run(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

}  // namespace parity::msprobe::testing
