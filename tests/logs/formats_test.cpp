// parse_log on every supported text format, from fixtures written from the real line
// formats (shared/reference/formats.md §2-4).
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "domain/logs/log_parser.h"
#include "domain/logs/user_regex.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::Fixture;

ParseResult MustParse(const std::string& name, ParseOptions options = {}) {
  auto r = ParseLog(Fixture(name), options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : ParseResult{};
}

bool HasWarning(const ParseResult& r, const std::string& code) {
  for (const auto& w : r.warnings) {
    if (w.code == code) return true;
  }
  return false;
}

TEST(Torchtitan, ColouredV022LinesWithRankPrefix) {
  ParseResult r = MustParse("torchtitan_v022_color.log");
  EXPECT_EQ(r.format, LogFormat::kTorchtitan);
  EXPECT_NE(r.format_detail.find("8.5f"), std::string::npos) << r.format_detail;
  ASSERT_EQ(r.metrics.size(), 2u);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->series.size(), 10u);  // the validate line is not a training step
  EXPECT_EQ(loss->series.keys.front(), 1);
  EXPECT_DOUBLE_EQ(loss->series.values.front(), 10.84523);
  EXPECT_DOUBLE_EQ(loss->series.values.back(), 7.41234);
  EXPECT_EQ(loss->precision.min_decimals, 5);
  EXPECT_FALSE(loss->precision.exact);
  const MetricResult* gn = r.Find("grad_norm");
  ASSERT_NE(gn, nullptr);
  EXPECT_EQ(gn->precision.min_decimals, 4);
  EXPECT_DOUBLE_EQ(gn->series.values[1], 4.8821);
  EXPECT_EQ(r.rank, 0);
  EXPECT_TRUE(r.success_marker);  // "Training completed"
  EXPECT_EQ(r.steps.seen, 10);
  EXPECT_EQ(r.steps.interval, 1);
  EXPECT_EQ(r.steps.missing_count, 0);
  EXPECT_EQ(r.errors_total, 0);
  EXPECT_EQ(r.lines, 15);
}

TEST(Torchtitan, AllMetricsIncludingThousandsSeparators) {
  ParseOptions o;
  o.metrics = {"*"};
  ParseResult r = MustParse("torchtitan_v022_color.log", o);
  const MetricResult* tps = r.Find("tps");
  ASSERT_NE(tps, nullptr);
  EXPECT_DOUBLE_EQ(tps->series.values[0], 7282);
  const MetricResult* tflops = r.Find("tflops");
  ASSERT_NE(tflops, nullptr);
  EXPECT_DOUBLE_EQ(tflops->series.values[0], 1234.5);  // "1,234.50"
  ASSERT_NE(r.Find("memory_gib"), nullptr);
  EXPECT_DOUBLE_EQ(r.Find("memory_pct")->series.values[0], 64.99);
  EXPECT_DOUBLE_EQ(r.Find("mfu")->series.values[0], 0.17);
}

TEST(Torchtitan, V021PlainLinesAndMfuNotAvailable) {
  ParseOptions o;
  o.metrics = {"loss", "mfu"};
  ParseResult r = MustParse("torchtitan_v021_plain.log", o);
  EXPECT_EQ(r.format, LogFormat::kTorchtitan);
  EXPECT_NE(r.format_detail.find("7.4f"), std::string::npos);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->precision.min_decimals, 4);
  EXPECT_DOUBLE_EQ(loss->series.values[0], 10.8452);
  EXPECT_FALSE(r.rank.has_value());  // unprefixed lines
  // "mfu: N/A" carries no value: reported as not available at those steps, never as zeros
  // and not as a metric the log lacks.
  EXPECT_EQ(r.Find("mfu"), nullptr);
  EXPECT_TRUE(HasWarning(r, "metric_not_available"));
  EXPECT_FALSE(HasWarning(r, "metric_not_found"));
  EXPECT_FALSE(r.success_marker);
}

TEST(TorchtitanNpu, ElapsedTimePerStepAndSuccessMarker) {
  ParseOptions o;
  o.metrics = {"loss", "grad_norm", "elapsed_time_per_step", "mfu"};
  ParseResult r = MustParse("torchtitan_npu.log", o);
  EXPECT_EQ(r.format, LogFormat::kTorchtitanNpu);
  ASSERT_NE(r.Find("elapsed_time_per_step"), nullptr);
  EXPECT_DOUBLE_EQ(r.Find("elapsed_time_per_step")->series.values[0], 3.125);
  EXPECT_DOUBLE_EQ(r.Find("mfu")->series.values[0], 27.73);
  EXPECT_TRUE(r.success_marker);
  EXPECT_EQ(r.success_line, 12);
}

TEST(Torchtitan, InterleavedRanksDefaultToRankZero) {
  ParseResult r = MustParse("torchtitan_4ranks.log");
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), r.ranks_seen);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->series.size(), 6u);
  EXPECT_DOUBLE_EQ(loss->series.values[0], 10.84523);
  EXPECT_TRUE(HasWarning(r, "multiple_ranks"));
  EXPECT_EQ(loss->issues.duplicates, 0);

  ParseOptions o;
  o.rank = 3;
  ParseResult r3 = MustParse("torchtitan_4ranks.log", o);
  ASSERT_NE(r3.Find("loss"), nullptr);
  EXPECT_DOUBLE_EQ(r3.Find("loss")->series.values[0], 13.84523);
  EXPECT_EQ(r3.rank, 3);
}

TEST(Megatron, TrainingLogWithPrefixNanIterationAndValidation) {
  ParseOptions o;
  o.metrics = {"loss", "grad_norm", "lr", "nan_iterations"};
  ParseResult r = MustParse("megatron.log", o);
  EXPECT_EQ(r.format, LogFormat::kMegatron);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  // Megatron omits "lm loss" on the NaN iteration (avg > 0.0 is false for NaN): step 6 has
  // no loss value, and "number of nan iterations" says why; the step itself was logged.
  EXPECT_EQ(loss->series.size(), 7u);
  EXPECT_EQ(std::count(loss->series.keys.begin(), loss->series.keys.end(), 6), 0);
  EXPECT_DOUBLE_EQ(loss->series.values[0], 11.07468);
  EXPECT_EQ(loss->precision.min_decimals, 5);  // 1.107468E+01: 6 mantissa decimals, exponent 1
  EXPECT_EQ(r.steps.expected_last, 10);
  EXPECT_EQ(r.steps.missing_count, 2);  // 9, 10 (the run stopped at 8)
  EXPECT_EQ(r.steps.missing.front(), 9);
  EXPECT_TRUE(HasWarning(r, "incomplete_run"));
  EXPECT_TRUE(HasWarning(r, "missing_steps"));
  EXPECT_DOUBLE_EQ(r.Find("nan_iterations")->series.values[5], 1);
  EXPECT_EQ(r.Find("grad_norm")->precision.min_decimals, 3);
  EXPECT_DOUBLE_EQ(r.Find("lr")->series.values[0], 1.40625e-4);
  EXPECT_EQ(r.Find("lr")->precision.min_decimals, 9);  // 1.125000E-03 at step 8
}

TEST(Megatron, OldLinesWithoutTimestamp) {
  ParseResult r = MustParse("megatron_old.log");
  EXPECT_EQ(r.format, LogFormat::kMegatron);
  ASSERT_NE(r.Find("loss"), nullptr);
  EXPECT_EQ(r.Find("loss")->series.keys, (std::vector<int64_t>{100, 200, 300, 400, 500}));
  EXPECT_EQ(r.steps.interval, 100);
  EXPECT_EQ(r.steps.expected_last, 5000);
}

TEST(MindSpeed, PanGuMtpHeadKeywordsAsPrecisionComparerUsesThem) {
  ParseOptions o;
  o.metrics = {};
  o.keywords = {"mtp head 0 lm loss", "grad norm"};
  ParseResult r = MustParse("pangu_mindspeed.log", o);
  EXPECT_EQ(r.format, LogFormat::kMegatron);
  const MetricResult* mtp = r.Find("mtp head 0 lm loss");
  ASSERT_NE(mtp, nullptr);
  ASSERT_EQ(mtp->series.size(), 6u);
  EXPECT_DOUBLE_EQ(mtp->series.values[0], 8.234567);
  EXPECT_EQ(mtp->issues.duplicates, 0);  // read once although the Megatron reader also sees it
  const MetricResult* gn = r.Find("grad norm");
  ASSERT_NE(gn, nullptr);
  EXPECT_DOUBLE_EQ(gn->series.values[1], 3.160);
  EXPECT_TRUE(r.success_marker);  // "training success"
}

TEST(DeepSpeed, ProgressLinesAndMegatronDeepSpeedIterations) {
  ParseOptions o;
  o.metrics = {"loss", "ds_lr", "tflops"};
  ParseResult r = MustParse("deepspeed.log", o);
  EXPECT_EQ(r.format, LogFormat::kDeepSpeed);
  ASSERT_NE(r.Find("loss"), nullptr);
  EXPECT_EQ(r.Find("loss")->series.keys, (std::vector<int64_t>{199, 200, 201, 202}));
  ASSERT_NE(r.Find("ds_lr"), nullptr);
  EXPECT_TRUE(r.Find("ds_lr")->precision.exact);
  EXPECT_DOUBLE_EQ(r.Find("ds_lr")->series.values[0], 0.000240653265864008);
  EXPECT_DOUBLE_EQ(r.Find("tflops")->series.values[0], 69.85);
}

TEST(HfTrainer, DictLinesNumberedInOrder) {
  ParseOptions o;
  o.metrics = {"loss", "grad_norm", "lr"};
  ParseResult r = MustParse("hf_trainer.log", o);
  EXPECT_EQ(r.format, LogFormat::kHfTrainer);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.keys, (std::vector<int64_t>{1, 2, 3, 4}));  // eval/summary dicts skipped
  EXPECT_DOUBLE_EQ(loss->series.values[0], 2.0602);
  EXPECT_EQ(loss->precision.min_decimals, 4);
  EXPECT_TRUE(r.Find("grad_norm")->precision.exact);  // repr: stored in full
  EXPECT_DOUBLE_EQ(r.Find("grad_norm")->series.values[0], 1.8180000305175781);
  EXPECT_TRUE(HasWarning(r, "no_step_numbers"));
}

TEST(Errors, EveryKindWithLineNumbersAndRanks) {
  ParseResult r = MustParse("errors.log");
  std::map<int64_t, std::string> by_line;
  for (const auto& e : r.errors) by_line[e.line] = e.kind;
  EXPECT_EQ(by_line[3], "traceback");
  EXPECT_EQ(by_line[5], "npu_oom");
  EXPECT_EQ(by_line[6], "npu_function_error");
  EXPECT_EQ(by_line[7], "torch_npu_error");
  EXPECT_EQ(by_line[8], "exception");  // "[Error]: The vector core execution is abnormal."
  EXPECT_EQ(by_line[9], "cann_inner_error");
  EXPECT_EQ(by_line[10], "collective_timeout");
  EXPECT_EQ(by_line[11], "cuda_oom");
  EXPECT_EQ(by_line[12], "error_log");
  EXPECT_EQ(by_line[13], "killed");
  EXPECT_EQ(by_line[14], "error_log");  // "[ERROR] ... (SIGKILL)": the ERROR level wins
  EXPECT_EQ(by_line.count(15), 0u);     // "Error handling is enabled" is no error
  EXPECT_EQ(by_line.count(4), 0u);
  EXPECT_EQ(r.errors_total, 11);
  for (const auto& e : r.errors) {
    if (e.line == 5) {
      EXPECT_EQ(e.rank, 1);
      EXPECT_NE(e.text.find("Tried to allocate 2.00 GiB"), std::string::npos);
    }
  }
  EXPECT_EQ(r.Find("loss")->series.size(), 2u);
}

TEST(Keywords, CustomRegexWithNamedGroups) {
  ParseOptions o;
  o.metrics = {};
  o.regex = R"(step:\s*(?P<step>\d+)\s+loss:\s*(?<my_loss>[-+0-9.eE]+|nan))";
  ParseResult r = MustParse("torchtitan_v021_plain.log", o);
  const MetricResult* m = r.Find("my_loss");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->series.size(), 10u);
  EXPECT_EQ(m->series.keys[9], 10);
  EXPECT_DOUBLE_EQ(m->series.values[0], 10.8452);
}

TEST(Keywords, RegexRequiredLiteralIsOnlyWhatEveryMatchContains) {
  EXPECT_EQ(RequiredLiteral(R"(step:\s*(?P<step>\d+)\s+loss:\s*(?<my_loss>[-+0-9.eE]+|nan))"), "step:");
  EXPECT_EQ(RequiredLiteral(R"(lm loss: (?<loss>[-+0-9.eE]+))"), "lm loss: ");
  EXPECT_EQ(RequiredLiteral(R"(grad_norms?: +(?<g>\S+))"), "grad_norm");  // 's?': the s is optional
  EXPECT_EQ(RequiredLiteral(R"(\[rank0\]:.*loss=(?<loss>\S+))"), "[rank0]:");
  EXPECT_EQ(RequiredLiteral(R"(loss=(?<loss>\S+)|lm loss: (?<lm>\S+))"), "");  // top-level alternatives
  EXPECT_EQ(RequiredLiteral(R"((?<loss>\d+\.\d+))"), "");
  EXPECT_EQ(RequiredLiteral(R"(ab{0,2}cd[xy]z)"), "cd");
  EXPECT_EQ(RequiredLiteral(R"(a(b|c)*defg)"), "defg");
  bool starts = false;
  EXPECT_EQ(RequiredLiteral(R"(lm loss: (?<loss>\S+))", &starts), "lm loss: ");
  EXPECT_TRUE(starts);
  EXPECT_EQ(RequiredLiteral(R"(a?bcd(?<x>\d))", &starts), "bcd");
  EXPECT_FALSE(starts);  // "bcd" may follow an "a"
  EXPECT_EQ(RequiredLiteral(R"(^loss=(?<x>\d))", &starts), "loss=");
  EXPECT_FALSE(starts);
  EXPECT_EQ(RequiredLiteral(R"(\d+ loss=(?<x>\d))", &starts), " loss=");
  EXPECT_FALSE(starts);
}

// The literal prefilter must not change what the regex reads: the same series with a
// pattern that has a literal, one that has none, and interleaved format lines and errors.
TEST(Keywords, RegexWithAndWithoutLiteralReadTheSameSeries) {
  testing::ScratchDir dir;
  std::string log;
  for (int step = 1; step <= 300; ++step) {
    log += "[titan] step: " + std::to_string(step) + "  loss: " + std::to_string(10.0 / step) + "  grad_norm: 1.5\n";
    if (step % 7 == 0) log += "my metric q=" + std::to_string(step * 0.25) + " at " + std::to_string(step) + "\n";
    if (step % 50 == 0) log += "RuntimeError: boom " + std::to_string(step) + "\n";
  }
  const auto path = dir.Write("mixed.log", log);
  ParseOptions with_literal;
  with_literal.metrics = {"loss"};
  with_literal.regex = R"(metric q=(?<q>[0-9.]+) at (?<step>\d+))";
  ParseOptions without_literal = with_literal;
  without_literal.regex = R"((?:metric q=)(?<q>[0-9.]+)(?: at )(?<step>\d+))";
  ASSERT_EQ(RequiredLiteral(without_literal.regex), "");
  ASSERT_EQ(RequiredLiteral(with_literal.regex), "metric q=");
  auto a_or = ParseLog(path, with_literal);
  auto b_or = ParseLog(path, without_literal);
  ASSERT_TRUE(a_or.ok() && b_or.ok());
  const ParseResult& a = *a_or;
  const ParseResult& b = *b_or;
  for (const ParseResult* r : {&a, &b}) {
    ASSERT_NE(r->Find("q"), nullptr);
    EXPECT_EQ(r->Find("q")->series.size(), 42u);
    EXPECT_EQ(r->Find("q")->series.keys[0], 7);
    EXPECT_DOUBLE_EQ(r->Find("q")->series.values[0], 1.75);
    ASSERT_NE(r->Find("loss"), nullptr);
    EXPECT_EQ(r->Find("loss")->series.size(), 300u);
    EXPECT_EQ(r->errors_total, 6);
    EXPECT_EQ(r->lines, 348);
  }
  EXPECT_EQ(a.Find("q")->series.values, b.Find("q")->series.values);
  EXPECT_EQ(a.errors[3].line, b.errors[3].line);
}

TEST(Keywords, RegexWithoutNamedGroupIsAClearError) {
  ParseOptions o;
  o.regex = "loss: ([0-9.]+)";
  auto r = ParseLog(Fixture("torchtitan_v021_plain.log"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no named group"), std::string::npos);
}

TEST(Paths, GlobExpandsPerRankFiles) {
  testing::ScratchDir dir;
  dir.Write("rank_1.log", "x\n");
  dir.Write("rank_0.log", "x\n");
  dir.Write("other.txt", "x\n");
  auto paths = ExpandLogPaths({(dir.path() / "rank_*.log").string()});
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  ASSERT_EQ(paths->size(), 2u);
  EXPECT_EQ((*paths)[0].filename(), "rank_0.log");
  auto none = ExpandLogPaths({(dir.path() / "nothing_*.log").string()});
  EXPECT_FALSE(none.ok());
}

TEST(Paths, GlobsInAnyComponentAndFoldersOfLogs) {
  testing::ScratchDir dir;
  dir.Write("runs/a/rank_0.log", "x\n");
  dir.Write("runs/b/rank_0.log", "x\n");
  dir.Write("runs/b/rank_1.log.gz", "x");
  dir.Write("runs/b/checkpoint.pt", "x");
  dir.Write("runs/b/.hidden.log", "x\n");
  // A wildcard in a folder's name, not only the file's.
  auto across = ExpandLogPaths({(dir.path() / "runs/*/rank_0.log").string()});
  ASSERT_TRUE(across.ok()) << across.status().ToString();
  ASSERT_EQ(across->size(), 2u);
  EXPECT_EQ((*across)[0], dir.path() / "runs/a/rank_0.log");
  EXPECT_EQ((*across)[1], dir.path() / "runs/b/rank_0.log");
  // A folder: the logs directly in it (compressed too), sorted; not a checkpoint, not a dotfile.
  auto folder = ExpandLogPaths({(dir.path() / "runs/b").string()});
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  ASSERT_EQ(folder->size(), 2u);
  EXPECT_EQ((*folder)[0].filename(), "rank_0.log");
  EXPECT_EQ((*folder)[1].filename(), "rank_1.log.gz");
  // A pattern naming folders expands each.
  auto folders = ExpandLogPaths({(dir.path() / "runs/*").string()});
  ASSERT_TRUE(folders.ok()) << folders.status().ToString();
  EXPECT_EQ(folders->size(), 3u);
  // A TensorBoard layout stays one path, read as TensorBoard.
  dir.Write("tb/20261202-0101/events.out.tfevents.1.host", "x");
  auto tb = ExpandLogPaths({(dir.path() / "tb").string()});
  ASSERT_TRUE(tb.ok()) << tb.status().ToString();
  ASSERT_EQ(tb->size(), 1u);
  EXPECT_EQ((*tb)[0], dir.path() / "tb");
  // A folder with nothing to read says so, naming it.
  dir.Write("empty/notes.md", "x");
  auto empty = ExpandLogPaths({(dir.path() / "empty").string()});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("holds no training log"), std::string::npos) << empty.status().message();
}

TEST(Paths, APatternMatchingTooManyFilesIsRefused) {
  testing::ScratchDir dir;
  for (size_t i = 0; i <= kMaxLogPaths; ++i) dir.Write("r/" + std::to_string(i) + ".log", "");
  auto many = ExpandLogPaths({(dir.path() / "r/*.log").string()});
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("more than"), std::string::npos) << many.status().message();
}

TEST(Sha256, ComputedWhileReading) {
  ParseOptions o;
  o.sha256 = true;
  testing::ScratchDir dir;
  auto p = dir.Write("abc.log", "abc");
  auto r = ParseLog(p, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace parity::logs
