// TensorBoard event files written by the real protobuf library (fixtures/make_tfevents.py):
// scalars in simple_value and tensor form, CRC checks, truncation.
#include <gtest/gtest.h>

#include "domain/logs/crc32c.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/tfevents.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::Fixture;

std::filesystem::path BaselineEvents() {
  for (const auto& e : std::filesystem::recursive_directory_iterator(Fixture("tb_baseline"))) {
    if (e.is_regular_file()) return e.path();
  }
  return {};
}

bool HasWarning(const ParseResult& r, const std::string& code) {
  for (const auto& w : r.warnings) {
    if (w.code == code) return true;
  }
  return false;
}

TEST(Crc32c, KnownVectors) {
  // RFC 3720 B.4: 32 bytes of zeros -> 0x8A9136AA; "123456789" -> 0xE3069283.
  const unsigned char zeros[32] = {};
  EXPECT_EQ(Crc32c(zeros, 32), 0x8A9136AAu);
  const std::string digits = "123456789";
  EXPECT_EQ(Crc32c(reinterpret_cast<const unsigned char*>(digits.data()), digits.size()), 0xE3069283u);
}

TEST(TensorBoard, DirectoryOfEventsAutoDetected) {
  ParseOptions o;
  o.metrics = {"loss", "grad_norm", "lr"};
  auto r = ParseLog(Fixture("tb_baseline"), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, LogFormat::kTensorBoard);
  const MetricResult* loss = r->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->source, "tensorboard:loss_metrics/global_avg_loss");
  ASSERT_EQ(loss->series.size(), 10u);
  EXPECT_TRUE(loss->precision.exact);
  EXPECT_EQ(loss->series.values[0], static_cast<double>(10.845231056213379f));
  const MetricResult* gn = r->Find("grad_norm");  // scalar tensor, DT_FLOAT
  ASSERT_NE(gn, nullptr);
  EXPECT_EQ(gn->series.values[9], static_cast<double>(2.501209974288940f));
  const MetricResult* lr = r->Find("lr");  // scalar tensor, DT_DOUBLE
  ASSERT_NE(lr, nullptr);
  EXPECT_DOUBLE_EQ(lr->series.values[9], 8e-4);
  EXPECT_EQ(r->steps.seen, 10);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(TensorBoard, SingleFileByNameAndUnknownMetricWarns) {
  ParseOptions o;
  o.metrics = {"loss", "mfu"};
  auto r = ParseLog(BaselineEvents(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->Find("loss"), nullptr);
  EXPECT_TRUE(HasWarning(*r, "metric_not_found"));
}

TEST(TensorBoard, DataCrcMismatchSkipsTheRecordWithAWarning) {
  testing::ScratchDir dir;
  std::string bytes = testing::ReadFile(BaselineEvents());
  // Record 1 is the file_version event (12 + 24 + 4 bytes); flip a byte in record 2's payload.
  bytes[40 + 12 + 20] ^= 0x01;
  auto p = dir.Write("events.out.tfevents.1.bad", bytes);
  auto r = ParseLog(p, ParseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(HasWarning(*r, "crc_mismatch"));
  ASSERT_NE(r->Find("loss"), nullptr);
  EXPECT_EQ(r->Find("loss")->series.size(), 9u);  // step 1's loss was in the damaged record
  EXPECT_EQ(r->Find("loss")->series.keys.front(), 2);
}

TEST(TensorBoard, LengthCrcMismatchIsAnError) {
  testing::ScratchDir dir;
  std::string bytes = testing::ReadFile(BaselineEvents());
  bytes[40] ^= 0x01;  // record 2's length
  auto p = dir.Write("events.out.tfevents.2.bad", bytes);
  auto r = ParseLog(p, ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("length CRC mismatch in record 2 at byte offset 40"), std::string::npos)
      << r.status().message();
}

TEST(TensorBoard, TruncatedLastRecordIsAWarning) {
  testing::ScratchDir dir;
  std::string bytes = testing::ReadFile(BaselineEvents());
  bytes.resize(bytes.size() - 7);
  auto p = dir.Write("events.out.tfevents.3.cut", bytes);
  auto r = ParseLog(p, ParseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(HasWarning(*r, "truncated_record"));
  EXPECT_EQ(r->Find("loss")->series.size(), 10u);
  EXPECT_EQ(r->Find("grad_norm")->series.size(), 10u);
}

TEST(TensorBoard, EventFileWithAnotherNameIsRecognisedByItsFraming) {
  testing::ScratchDir dir;
  auto p = dir.Write("run.bin", testing::ReadFile(BaselineEvents()));
  auto r = ParseLog(p, ParseOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->format, LogFormat::kTensorBoard);
}

TEST(TensorBoard, EmptyDirectoryIsNotFound) {
  testing::ScratchDir dir;
  ParseOptions o;
  o.format = LogFormat::kTensorBoard;
  auto r = ParseLog(dir.path(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kNotFound);
}

}  // namespace
}  // namespace parity::logs
