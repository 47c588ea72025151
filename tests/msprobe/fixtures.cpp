#include "tests/msprobe/fixtures.h"

#include <random>
#include <set>

#include <gtest/gtest.h>

#include "domain/msprobe/compare_csv.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"

namespace parity::msprobe::testing {

namespace fs = std::filesystem;

fs::path MsprobeFixtures() {
  const fs::path dir = fs::path(PARITY_SOURCE_DIR) / "tests/fixtures/msprobe-real";
  std::error_code ec;
  if (fs::exists(dir / "README.md", ec)) return fs::weakly_canonical(dir);
  ADD_FAILURE() << "msprobe fixtures not found at " << dir.string() << " (they are part of the repository)";
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
