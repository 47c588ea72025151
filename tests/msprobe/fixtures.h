// Where the real msprobe fixtures are: <repo>/tests/fixtures/msprobe-real (real msprobe
// 26.0.0 output, kept byte for byte; its README says how it was made).
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

// Cell-for-cell agreement of parity's compare CSV with a real msprobe compare CSV (fails
// the calling test). In tensor mode the real-data metric columns (Cosine ... Five
// Thousandths Err Ratio) are skipped: parity does not compute them.
void ExpectTableMatches(const std::filesystem::path& mine, const std::filesystem::path& real, bool tensor_mode);

// Runs argv (no shell) in cwd; returns exit status, fails the test on error.
int Run(const std::vector<std::string>& argv, const std::filesystem::path& cwd);

}  // namespace parity::msprobe::testing
