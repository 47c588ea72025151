// Logs that change while parse_log reads them. A regular file is read through a guarded
// mapping: a log truncated under it (rotation, a writer starting over) must give a clear
// error naming the path and both sizes, never a crash (SIGBUS) and never a short result; a
// log that grows is read to its new end; pipes are read with read().
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <chrono>
#include <thread>

#include "domain/logs/log_parser.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::ScratchDir;

// Megatron lines, one per iteration 1..n (each ~300 bytes).
std::string MegatronLog(int first, int last) {
  std::string text;
  char line[512];
  for (int i = first; i <= last; ++i) {
    std::snprintf(line, sizeof line,
                  " iteration %8d/  100000 | consumed samples: %12d | elapsed time per iteration (ms): 296.8 | "
                  "learning rate: 3.937E-06 | global batch size:     8 | lm loss: %.6E | loss scale: 131072.0 | "
                  "grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
                  i, i * 8, 10.0 - i * 1e-5, 5.0 + (i % 7) * 0.125);
    text += line;
  }
  return text;
}

constexpr int kSteps = 40000;  // ~12 MB: many 1 MiB blocks

void ExpectShrankError(const Result<ParseResult>& r, const std::filesystem::path& path, off_t before,
                       off_t after) {
  ASSERT_FALSE(r.ok()) << "a log truncated while read must not give a result";
  EXPECT_EQ(r.status().kind(), ErrorKind::kFailedPrecondition);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("shrank while it was read"), std::string::npos) << m;
  EXPECT_NE(m.find(path.string()), std::string::npos) << m;
  EXPECT_NE(m.find(std::to_string(before) + " bytes when opened"), std::string::npos) << m;
  EXPECT_NE(m.find("is " + std::to_string(after) + " bytes now"), std::string::npos) << m;
}

// Parses `path`, running `change` (once) when the parser reports `after_bytes` read;
// `ran` says whether it did.
Result<ParseResult> ParseChangingOnce(const std::filesystem::path& path, uint64_t after_bytes,
                                      const std::function<void()>& change, bool& ran) {
  ParseOptions o;
  ran = false;
  o.progress = [&](uint64_t done, uint64_t) {
    if (ran || done < after_bytes) return;
    ran = true;
    change();
  };
  return ParseLog(path, o);
}

TEST(ShrinkingLog, TruncatedByAnotherThreadIsAnError) {
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, kSteps));
  const off_t size = static_cast<off_t>(std::filesystem::file_size(path));
  bool truncated = false;
  auto r = ParseChangingOnce(
      path, 2u << 20, [&] { std::thread([&] { ASSERT_EQ(::truncate(path.c_str(), 100000), 0); }).join(); },
      truncated);
  ASSERT_TRUE(truncated);
  ExpectShrankError(r, path, size, 100000);
}

TEST(ShrinkingLog, TruncatedToZeroByAnotherProcessIsAnError) {
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, kSteps));
  const off_t size = static_cast<off_t>(std::filesystem::file_size(path));
  bool truncated = false;
  auto r = ParseChangingOnce(
      path, 1u << 20,
      [&] {
        // What copytruncate does: another process empties the file in place.
        const pid_t child = ::fork();
        if (child == 0) _exit(::truncate(path.c_str(), 0) == 0 ? 0 : 1);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      },
      truncated);
  ASSERT_TRUE(truncated);
  ExpectShrankError(r, path, size, 0);
}

TEST(ShrinkingLog, ParsesAgainOnceTheWriterIsDone) {
  // The guard's state is per mapping: the next read of the same (now short) file is clean.
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, kSteps));
  ParseOptions o;
  o.progress = [&](uint64_t done, uint64_t) {
    if (done >= (2u << 20) && std::filesystem::file_size(path) > 200000) {
      std::filesystem::resize_file(path, 0);
      std::ofstream(path, std::ios::binary) << MegatronLog(1, 500);
    }
  };
  ASSERT_FALSE(ParseLog(path, o).ok());
  auto again = ParseLog(path, ParseOptions{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_NE(again->Find("loss"), nullptr);
  EXPECT_EQ(again->Find("loss")->series.size(), 500u);
  EXPECT_TRUE(again->warnings.empty() || again->warnings.front().code != "truncated_last_line");
}

TEST(ShrinkingLog, GrowingLogIsReadToItsNewEnd) {
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, kSteps));
  bool appended = false;
  auto r = ParseChangingOnce(
      path, 1u << 20,
      [&] { std::ofstream(path, std::ios::binary | std::ios::app) << MegatronLog(kSteps + 1, kSteps + 1000); },
      appended);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(appended);
  EXPECT_EQ(r->lines, kSteps + 1000);
  EXPECT_EQ(r->bytes, std::filesystem::file_size(path));
  const MetricResult* loss = r->Find("loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->series.size(), static_cast<size_t>(kSteps + 1000));
  EXPECT_EQ(loss->series.keys.back(), kSteps + 1000);
}

TEST(ShrinkingLog, PipeIsReadWithReadAndGivesTheSameResult) {
  ScratchDir dir;
  const std::string text = MegatronLog(1, 5000);
  const auto file = dir.Write("train.log", text);
  const auto fifo = dir.path() / "train.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
  auto piped = ParseLog(fifo, ParseOptions{});
  writer.join();
  auto mapped = ParseLog(file, ParseOptions{});
  ASSERT_TRUE(piped.ok()) << piped.status().ToString();
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  EXPECT_EQ(piped->lines, mapped->lines);
  EXPECT_EQ(piped->bytes, mapped->bytes);
  ASSERT_NE(piped->Find("grad_norm"), nullptr);
  EXPECT_EQ(piped->Find("grad_norm")->series.values, mapped->Find("grad_norm")->series.values);
  EXPECT_EQ(piped->Find("loss")->series.keys, mapped->Find("loss")->series.keys);
}

TEST(ShrinkingLog, FifoWithNoWriterHonoursCancellation) {
  // #17 item 6: a FIFO nobody writes to must neither block the open nor the read forever.
  ScratchDir dir;
  const auto fifo = dir.path() / "idle.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  CancellationSource source;
  ParseOptions o;
  o.cancel = source.token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source.Cancel();
  });
  auto r = ParseLog(fifo, o);
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCancelled) << r.status().ToString();
  EXPECT_NE(r.status().message().find("idle.fifo"), std::string::npos);
}

TEST(ShrinkingLog, DeviceIsRefusedNotRead) {
  auto r = ParseLog("/dev/zero", ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos) << r.status().ToString();
}

TEST(ShrinkingLog, GrowingLogEndingInAHalfWrittenLineGivesNoValueForIt) {
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, kSteps));
  const std::string next = MegatronLog(kSteps + 1, kSteps + 1);
  const std::string half = next.substr(0, next.find("lm loss: ") + 12);  // "lm loss: 9.5"
  bool appended = false;
  auto r = ParseChangingOnce(
      path, 1u << 20, [&] { std::ofstream(path, std::ios::binary | std::ios::app) << half; }, appended);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(appended);
  const MetricResult* loss = r->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.keys.back(), kSteps);
  EXPECT_EQ(r->steps.last, kSteps);
  bool warned = false;
  for (const auto& w : r->warnings) warned = warned || (w.code == "truncated_last_line" && w.line == kSteps + 1);
  EXPECT_TRUE(warned);
}

TEST(ShrinkingLogDeathTest, SigbusOutsideParseLogStillKills) {
  // The guard handles only faults inside its own mappings; any other SIGBUS keeps its
  // default action (the guard is installed by the parse before the fault).
  ScratchDir dir;
  const auto path = dir.Write("train.log", MegatronLog(1, 100));
  ASSERT_TRUE(ParseLog(path, ParseOptions{}).ok());
  EXPECT_EXIT(
      {
        const int fd = ::open(path.c_str(), O_RDWR);
        auto* p = static_cast<volatile char*>(::mmap(nullptr, 65536, PROT_READ, MAP_SHARED, fd, 0));
        if (::ftruncate(fd, 0) != 0) _exit(3);
        std::printf("%d", p[8192]);
        _exit(0);
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

}  // namespace
}  // namespace parity::logs
