// Damaged and odd input: each is a clear error or a warning in the result, never a crash
// and never a silent zero.
#include <gtest/gtest.h>

#include "domain/logs/log_parser.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::Fixture;
using testing::ReadFile;
using testing::ScratchDir;

const ParseWarning* FindWarning(const ParseResult& r, const std::string& code) {
  for (const auto& w : r.warnings) {
    if (w.code == code) return &w;
  }
  return nullptr;
}

TEST(Damaged, MissingFileIsNotFound) {
  auto r = ParseLog("/nonexistent/parity/train.log", ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/parity/train.log"), std::string::npos);
}

TEST(Damaged, EmptyFileIsAnError) {
  ScratchDir dir;
  auto r = ParseLog(dir.Write("empty.log", ""), ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("empty"), std::string::npos);
}

TEST(Damaged, TruncatedLastLineGivesNoInventedValue) {
  ScratchDir dir;
  std::string text = ReadFile(Fixture("torchtitan_v021_plain.log"));
  // Cut the last line in the middle of its loss value: "loss:  7.41" of "7.4123".
  const size_t cut = text.rfind("loss:") + 11;
  auto r = ParseLog(dir.Write("cut.log", text.substr(0, cut)), ParseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ParseWarning* w = FindWarning(*r, "truncated_last_line");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->line, 11);
  // The cut value is not a value: "7.41" is not what the run printed (7.4123). The series
  // ends at the last complete line, at the precision the log printed.
  EXPECT_NE(w->message.find("not read"), std::string::npos) << w->message;
  const MetricResult* loss = r->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.size(), 9u);  // steps 1..9; line 11 is step 10's cut line
  EXPECT_EQ(loss->series.keys.back(), 9);
  EXPECT_DOUBLE_EQ(loss->series.values.back(), 7.6001);
  EXPECT_EQ(loss->precision.min_decimals, 4);
}

TEST(Damaged, CrlfLineEndsParseTheSame) {
  ScratchDir dir;
  std::string text = ReadFile(Fixture("megatron_old.log"));
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto a = ParseLog(Fixture("megatron_old.log"), ParseOptions{});
  auto b = ParseLog(dir.Write("crlf.log", crlf), ParseOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_NE(b->Find("loss"), nullptr);
  EXPECT_EQ(a->Find("loss")->series.values, b->Find("loss")->series.values);
  EXPECT_EQ(a->Find("grad_norm")->series.values, b->Find("grad_norm")->series.values);
  EXPECT_EQ(b->Find("loss")->precision.min_decimals, 6);  // 9.729805E+00
}

TEST(Damaged, BinaryGarbageInsideATextLogIsWarnedAndSkipped) {
  ScratchDir dir;
  std::string text = ReadFile(Fixture("torchtitan_v021_plain.log"));
  // Replace the middle of line 5 (step 4) by NUL bytes and random binary.
  const size_t line5 = [&] {
    size_t p = 0;
    for (int i = 0; i < 4; ++i) p = text.find('\n', p) + 1;
    return p;
  }();
  std::string garbage("\x00\x01\xff\xfe\x00\x00\x7f\x80", 8);
  text.replace(line5 + 60, 8, garbage);
  auto r = ParseLog(dir.Write("garbage.log", text), ParseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const ParseWarning* w = FindWarning(*r, "binary_bytes");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->line, 5);
  const MetricResult* loss = r->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.size(), 9u);  // step 4 is gone, and reported missing
  EXPECT_EQ(r->steps.missing, (std::vector<int64_t>{4}));
}

TEST(Damaged, ABinaryFileIsNotATextLog) {
  ScratchDir dir;
  std::string bytes;
  for (int i = 0; i < 4096; ++i) bytes += static_cast<char>((i * 7919) & 0xFF);
  auto r = ParseLog(dir.Write("core.bin", bytes), ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a text training log"), std::string::npos);
}

TEST(Damaged, NoMetricLinesIsAWarningNotZeros) {
  ScratchDir dir;
  auto r = ParseLog(dir.Write("noise.log", "hello\nworld\n"), ParseOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->metrics.empty());
  EXPECT_NE(FindWarning(*r, "no_metric_lines"), nullptr);
  EXPECT_NE(FindWarning(*r, "metric_not_found"), nullptr);
}

TEST(Damaged, RestartedRunKeepsTheLaterValuesAndSaysSo) {
  ScratchDir dir;
  std::string text;
  auto line = [](int step, double loss) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "[titan] 2026-01-01 00:00:00,000 - root - INFO - step: %2d  loss: %8.5f  grad_norm:  1.0000\n",
                  step, loss);
    return std::string(buf);
  };
  for (int s = 1; s <= 6; ++s) text += line(s, 10.0 - s * 0.1);
  for (int s = 4; s <= 8; ++s) text += line(s, 20.0 - s * 0.1);  // resumed from step 3
  auto r = ParseLog(dir.Write("restart.log", text), ParseOptions{});
  ASSERT_TRUE(r.ok());
  const ParseWarning* w = FindWarning(*r, "restart");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->line, 7);
  EXPECT_NE(w->message.find("from 6 to 4"), std::string::npos);
  EXPECT_EQ(r->steps.duplicates, 3);
  EXPECT_EQ(r->steps.restarts, 1);
  const MetricResult* loss = r->Find("loss");
  EXPECT_EQ(loss->series.size(), 8u);
  EXPECT_DOUBLE_EQ(loss->series.values[3], 19.6);  // step 4 from the resumed run
  EXPECT_NE(FindWarning(*r, "duplicate_steps"), nullptr);
}

TEST(Damaged, NanAndInfAreCountedNotDropped) {
  ScratchDir dir;
  std::string text =
      "step:  1  loss:  2.00000  grad_norm:     nan\n"
      "step:  2  loss:      inf  grad_norm:  1.0000\n"
      "step:  3  loss:     -inf  grad_norm:  1.0000\n";
  auto r = ParseLog(dir.Write("nan.log", text), ParseOptions{});
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->Find("loss"), nullptr);
  EXPECT_EQ(r->Find("loss")->non_finite.inf, 2);
  EXPECT_EQ(r->Find("grad_norm")->non_finite.nan, 1);
  EXPECT_EQ(r->Find("loss")->precision.min_decimals, 5);  // non-finite values do not coarsen it
}

TEST(Damaged, LongLineAcrossReadBuffersIsHandled) {
  ScratchDir dir;
  std::string text = ReadFile(Fixture("torchtitan_v021_plain.log"));
  text.insert(0, std::string(5 << 20, 'x') + "\n");  // a 5 MiB line before the metrics
  auto r = ParseLog(dir.Write("long.log", text), ParseOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(FindWarning(*r, "long_line"), nullptr);
  EXPECT_EQ(r->Find("loss")->series.size(), 10u);
  EXPECT_EQ(r->lines, 12);
}

}  // namespace
}  // namespace parity::logs
