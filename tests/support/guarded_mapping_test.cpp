// GuardedMapping in both access modes: a file truncated under the mapping reads as zeros
// past its new end and shrank() says so, instead of a SIGBUS ending the process; a private
// writable mapping takes writes without changing the file.
#include "support/guarded_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace parity {
namespace {

class GuardedMappingTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("parity-guarded-" + std::to_string(::getpid()) + "-" +
             testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(path_, std::ios::binary) << std::string(kSize, 'x');
    fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  static constexpr size_t kSize = 64 * 4096;
  std::filesystem::path path_;
  int fd_ = -1;
};

TEST_F(GuardedMappingTest, ReadOnlyTruncatedFileReadsZerosAndReportsIt) {
  auto mapped = GuardedMapping::Map(fd_, kSize);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  const GuardedMapping& m = *mapped.value();
  EXPECT_EQ(m.data()[kSize - 1], 'x');
  EXPECT_EQ(m.writable_data(), nullptr);
  ASSERT_EQ(::ftruncate(fd_, 4096), 0);
  EXPECT_EQ(m.data()[4095], 'x');
  EXPECT_FALSE(m.shrank());
  EXPECT_EQ(m.data()[kSize / 2], '\0');  // past the new end: a zero page, not a SIGBUS
  EXPECT_TRUE(m.shrank());
}

TEST_F(GuardedMappingTest, PrivateWritableTakesWritesAndSurvivesTruncation) {
  auto mapped = GuardedMapping::Map(fd_, kSize, GuardedMapping::Access::kPrivateWritable);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  GuardedMapping& m = *mapped.value();
  ASSERT_NE(m.writable_data(), nullptr);
  m.writable_data()[0] = '{';
  std::ifstream in(path_, std::ios::binary);
  EXPECT_EQ(in.get(), 'x') << "a private mapping must not write to the file";
  ASSERT_EQ(::ftruncate(fd_, 8192), 0);
  m.writable_data()[kSize - 10] = 'y';  // a write past the new end lands in the zero page
  EXPECT_TRUE(m.shrank());
  EXPECT_EQ(m.data()[kSize - 10], 'y');
  EXPECT_EQ(m.data()[0], '{');
}

TEST_F(GuardedMappingTest, AFaultOutsideGuardedMappingsStillKills) {
  EXPECT_EXIT(
      {
        auto guard = GuardedMapping::Map(fd_, kSize);  // installs the handler
        int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
        auto* other = static_cast<volatile char*>(::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0));
        (void)::ftruncate(fd, 0);
        char c = other[kSize / 2];
        (void)c;
        std::exit(0);
      },
      testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace parity
