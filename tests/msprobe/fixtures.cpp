#include "tests/msprobe/fixtures.h"

#include <cstdlib>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "domain/msprobe/compare_csv.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"

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
  options.env_set = testing_support::GitTestEnv();
  auto result = RunProcess(options);
  if (!result.ok()) {
    ADD_FAILURE() << result.status().ToString();
    return -1;
  }
  if (!result->success()) ADD_FAILURE() << ShellQuote(argv) << ": " << result->Describe() << "\n" << result->err;
  return result->exit_code;
}

// Cell-for-cell agreement with the real msprobe compare CSV. In tensor mode the real-data
// metric columns (Cosine ... Five Thousandths Err Ratio) are not computed by parity.
void ExpectTableMatches(const fs::path& mine, const fs::path& real, bool tensor_mode) {
  SCOPED_TRACE(real.string());
  auto a = ReadCompareCsv(mine);
  auto b = ReadCompareCsv(real);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->header, b->header);
  ASSERT_EQ(a->rows.size(), b->rows.size());
  const std::set<std::string> skipped = tensor_mode ? std::set<std::string>{"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
                                                                            "One Thousandth Err Ratio",
                                                                            "Five Thousandths Err Ratio"}
                                                    : std::set<std::string>{};
  int mismatches = 0;
  for (size_t r = 0; r < a->rows.size(); ++r) {
    for (size_t c = 0; c < a->header.size(); ++c) {
      if (skipped.count(a->header[c])) continue;
      if (a->rows[r][c] != b->rows[r][c] && ++mismatches <= 10) {
        ADD_FAILURE() << "row " << r + 2 << " (" << b->rows[r][0] << ") column " << a->header[c] << ": parity \""
                      << a->rows[r][c] << "\" msprobe \"" << b->rows[r][c] << "\"";
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace parity::msprobe::testing
