// The corpus of issue #15: logs written from the trainers' own format strings
// (tests/logs/corpus/make_corpus.py, sources in its README), each case with its expected
// result decided by hand from the values the generator was given, never from parity's
// output. Every numbered case of the issue is one TEST here or in compare_test.cpp.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "domain/logs/compare.h"
#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::ReadFile;
using testing::ScratchDir;

std::filesystem::path Corpus(const std::string& name) {
  return std::filesystem::path(PARITY_LOGS_FIXTURES).parent_path() / "corpus" / name;
}

ParseResult MustParse(const std::filesystem::path& path, ParseOptions options = {}) {
  auto r = ParseLog(path, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : ParseResult{};
}

const ParseWarning* FindWarning(const ParseResult& r, const std::string& code) {
  for (const auto& w : r.warnings) {
    if (w.code == code) return &w;
  }
  return nullptr;
}

Result<RunComparison> Compare(const std::string& baseline, const std::string& candidate, CriteriaRequest request,
                              ParseOptions options = {}) {
  PARITY_ASSIGN_OR_RETURN(Criteria criteria, BuildCriteria(request));
  options.metrics.clear();
  for (const auto& m : criteria.metrics) options.metrics.push_back(m.metric);
  PARITY_ASSIGN_OR_RETURN(ParseResult b, ParseLog(Corpus(baseline), options));
  PARITY_ASSIGN_OR_RETURN(ParseResult c, ParseLog(Corpus(candidate), options));
  return CompareRuns(b, c, criteria, request.preset, false);
}

// ---- 1. pipeline parallelism: placeholder ranks never decide ----

TEST(Corpus, PipelineParallelPlaceholderRankIsNotTheResultsSeries) {
  ParseResult r = MustParse(Corpus("torchtitan_pp_baseline.log"));
  // Ranks 0 and 1 print loss -1.00000 at every step (first stage); ranks 2 and 3 the loss.
  EXPECT_EQ(r.rank, 2);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_FALSE(loss->placeholder);
  EXPECT_DOUBLE_EQ(loss->series.values.front(), 10.63464);  // 10.84523 - 0.2137 + 0.00311
  ASSERT_EQ(r.other_ranks.size(), 3u);
  for (const auto& other : r.other_ranks) {
    const MetricResult* l = other.Find("loss");
    ASSERT_NE(l, nullptr) << other.rank;
    EXPECT_EQ(l->placeholder, other.rank < 2) << other.rank;
    const MetricResult* g = other.Find("grad_norm");
    ASSERT_NE(g, nullptr);
    EXPECT_FALSE(g->placeholder) << "grad_norm varies on every rank";
  }
  const ParseWarning* w = FindWarning(r, "placeholder_series");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("rank(s) 0, 1"), std::string::npos) << w->message;
}

TEST(Corpus, PipelineParallelMovedLastStageLossFailsWithEveryCriterion) {
  // Ranks 2 and 3 moved by 0.01 from step 10 on: every one of these must FAIL (the issue's
  // false PASS came from reading rank 0's placeholder).
  std::vector<CriteriaRequest> requests(4);
  requests[0].metrics = {"loss"};
  requests[1].metrics = {"loss"};
  requests[1].tolerance = Tolerance{1e-3, std::nullopt};
  requests[2].preset = "precision-comparer";
  requests[3].metrics = {"loss", "grad_norm"};
  for (const auto& request : requests) {
    auto c = Compare("torchtitan_pp_baseline.log", "torchtitan_pp_candidate_moved.log", request);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->verdict, Verdict::kFail) << c->reason;
    const MetricComparison& loss = c->metrics.front();
    EXPECT_EQ(loss.metric, "loss");
    EXPECT_EQ(loss.verdict, Verdict::kFail);
    EXPECT_EQ(loss.first_exceeding_step, 10);
    EXPECT_EQ(loss.exceeding_count, 11);  // steps 10..20
    EXPECT_EQ(loss.first_differing_step, 10);
    EXPECT_EQ(loss.equal_steps, 9);
    EXPECT_EQ(loss.rank, 2);
    ASSERT_EQ(loss.per_rank.size(), 4u);
    for (const auto& r : loss.per_rank) {
      EXPECT_EQ(r.placeholder, r.rank < 2) << r.rank;
      if (!r.placeholder) {
        EXPECT_EQ(r.verdict, Verdict::kFail);
      }
    }
  }
}

TEST(Corpus, PipelineParallelChangedPlaceholderDoesNotChangeTheVerdict) {
  CriteriaRequest request;
  request.metrics = {"loss"};
  request.tolerance = Tolerance{1e-3, std::nullopt};
  auto same = Compare("torchtitan_pp_baseline.log", "torchtitan_pp_baseline.log", request);
  auto flipped = Compare("torchtitan_pp_baseline.log", "torchtitan_pp_candidate_placeholder.log", request);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  ASSERT_TRUE(flipped.ok()) << flipped.status().ToString();
  EXPECT_EQ(same->verdict, Verdict::kPass) << same->reason;
  EXPECT_EQ(flipped->verdict, Verdict::kPass) << flipped->reason;
  EXPECT_EQ(flipped->metrics.front().steps_compared, 20);
}

TEST(Corpus, AnAskedRankIsReadAlone) {
  ParseOptions o;
  o.rank = 0;
  ParseResult r = MustParse(Corpus("torchtitan_pp_baseline.log"), o);
  EXPECT_EQ(r.rank, 0);
  EXPECT_TRUE(r.other_ranks.empty());
  ASSERT_NE(r.Find("loss"), nullptr);
  EXPECT_DOUBLE_EQ(r.Find("loss")->series.values.front(), -1.0);
}

// ---- 2. a cut last line never becomes a value ----

TEST(Corpus, EveryCutOfTheLastMetricLineGivesTheValueOrNothing) {
  const std::string text = ReadFile(Corpus("torchtitan_50_steps.log"));
  ASSERT_FALSE(text.empty());
  const size_t last_line = text.rfind('\n', text.size() - 2) + 1;
  ScratchDir dir;
  int read_whole = 0;
  for (size_t cut = last_line + 1; cut < text.size(); ++cut) {  // text.size() - 1 drops only the '\n'
    const auto path = dir.Write("cut.log", text.substr(0, cut));
    ParseResult r = MustParse(path);
    const MetricResult* loss = r.Find("loss");
    const MetricResult* grad = r.Find("grad_norm");
    ASSERT_NE(loss, nullptr);
    ASSERT_NE(grad, nullptr);
    const std::string at = "cut after byte " + std::to_string(cut - last_line) + ": " + text.substr(last_line, cut - last_line);
    ASSERT_TRUE(loss->series.keys.back() == 49 || loss->series.keys.back() == 50) << at;
    if (loss->series.keys.back() == 50) {
      ++read_whole;
      EXPECT_EQ(loss->series.values.back(), 3.10399) << at;
      ASSERT_EQ(grad->series.keys.back(), 50) << at;
      EXPECT_EQ(grad->series.values.back(), 0.5678) << at;
    } else {
      EXPECT_EQ(grad->series.keys.back(), 49) << at;
    }
    EXPECT_EQ(loss->precision.min_decimals, 5) << at;
    const ParseWarning* w = FindWarning(r, "truncated_last_line");
    ASSERT_NE(w, nullptr) << at;
    EXPECT_EQ(w->line, 50) << at;
  }
  // The line holds its values once "mfu: 0.17%" is complete (the last three cuts: after
  // '%', and the line without its newline is the same bytes): at least those.
  EXPECT_GE(read_whole, 1);
}

TEST(Corpus, LossCutToThreePointOneIsNotAValue) {
  const std::string text = ReadFile(Corpus("torchtitan_50_steps.log"));
  const size_t at = text.rfind("3.10399");
  ASSERT_NE(at, std::string::npos);
  ScratchDir dir;
  ParseResult r = MustParse(dir.Write("cut.log", text.substr(0, at + 3)));  // "... loss:  3.1"
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.keys.back(), 49);
  EXPECT_EQ(loss->precision.min_decimals, 5);
  const ParseWarning* w = FindWarning(r, "truncated_last_line");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("not read"), std::string::npos) << w->message;
}

// ---- 5. the logging grid ----

TEST(Corpus, TorchtitanLogFreqGridHasNoMissingSteps) {
  ParseResult r = MustParse(Corpus("torchtitan_log_freq_10.log"));
  EXPECT_EQ(r.steps.first, 1);
  EXPECT_EQ(r.steps.last, 100);
  EXPECT_EQ(r.steps.interval, 10);
  EXPECT_EQ(r.steps.expected_count, 11);  // 1, 10, 20, ..., 100
  EXPECT_EQ(r.steps.missing_count, 0);
  EXPECT_EQ(FindWarning(r, "missing_steps"), nullptr);
  ParseOptions o;
  o.expected_steps = 120;
  ParseResult short_run = MustParse(Corpus("torchtitan_log_freq_10.log"), o);
  EXPECT_EQ(short_run.steps.expected_count, 13);
  EXPECT_EQ(short_run.steps.missing_count, 2);
  EXPECT_EQ(short_run.steps.missing, (std::vector<int64_t>{110, 120}));
}

// ---- 6. Megatron skipped iterations exist ----

TEST(Corpus, MegatronSkippedIterationsAreLoggedSteps) {
  ParseResult r = MustParse(Corpus("megatron_skipped.log"));
  EXPECT_EQ(r.format, LogFormat::kMegatron);
  EXPECT_EQ(r.steps.first, 1);
  EXPECT_EQ(r.steps.last, 12);
  EXPECT_EQ(r.steps.seen, 12);
  EXPECT_EQ(r.steps.missing_count, 0);
  EXPECT_EQ(r.steps.expected_count, 12);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.keys, (std::vector<int64_t>{3, 4, 5, 6, 8, 9, 10, 11, 12}));
  EXPECT_DOUBLE_EQ(loss->series.values.front(), 10.28957);
}

// ---- 7. N/A is a value absent at that step ----

TEST(Corpus, MfuNotAvailableIsNotMetricNotFound) {
  ParseOptions o;
  o.metrics = {"loss", "mfu"};
  ParseResult r = MustParse(Corpus("torchtitan_mfu_na.log"), o);
  EXPECT_EQ(r.Find("mfu"), nullptr);
  EXPECT_EQ(FindWarning(r, "metric_not_found"), nullptr);
  const ParseWarning* w = FindWarning(r, "metric_not_available");
  ASSERT_NE(w, nullptr);
  EXPECT_NE(w->message.find("'mfu'"), std::string::npos) << w->message;
  EXPECT_NE(w->message.find("5 logged steps"), std::string::npos) << w->message;
  ASSERT_NE(r.Find("loss"), nullptr);
  EXPECT_EQ(r.Find("loss")->series.size(), 5u);
}

// ---- 9. HF Trainer: each dict at its global step ----

TEST(Corpus, HfTrainerDictsTakeTheProgressBarsGlobalStep) {
  ParseResult r = MustParse(Corpus("hf_trainer_tqdm.log"));
  EXPECT_EQ(r.format, LogFormat::kHfTrainer);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->series.keys, (std::vector<int64_t>{5, 10, 15, 20}));
  EXPECT_EQ(loss->series.values, (std::vector<double>{2.25, 2.0, 1.75, 1.5}));
  EXPECT_EQ(FindWarning(r, "no_step_numbers"), nullptr);
  EXPECT_EQ(r.steps.interval, 5);
  EXPECT_EQ(r.steps.missing_count, 0);
}

// ---- #13 item 7: a trainer's own metrics file, at full precision ----

TEST(Corpus, JsonLinesMetricsFileIsReadInFull) {
  ParseOptions o;
  o.metrics = {"loss", "grad_norm", "lr", "mfu"};
  ParseResult r = MustParse(Corpus("metrics.jsonl"), o);
  EXPECT_EQ(r.format, LogFormat::kJsonl);
  const MetricResult* loss = r.Find("loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->series.size(), 10u);
  EXPECT_TRUE(loss->precision.exact);
  // json.dumps wrote repr(float): the very double.
  EXPECT_EQ(loss->series.values[0], 0x1.5b8p+1 - 1.0 / 1024 + 1.0 / 3 * 1e-7);
  const MetricResult* grad = r.Find("grad_norm");
  ASSERT_NE(grad, nullptr);
  EXPECT_TRUE(grad->precision.exact) << "1.8319 at step 3 is a short repr of the same series";
  const MetricResult* mfu = r.Find("mfu");
  ASSERT_NE(mfu, nullptr);
  EXPECT_EQ(mfu->series.size(), 9u);
  EXPECT_EQ(mfu->not_available, 1);
  EXPECT_EQ(r.steps.missing_count, 0);
  // Two identical files are bitwise equal: full precision allows a bitwise PASS.
  CriteriaRequest request;
  request.bitwise = true;
  auto c = Compare("metrics.jsonl", "metrics.jsonl", request);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->verdict, Verdict::kPass) << c->reason;
  EXPECT_EQ(c->metrics.front().bitwise_equal_steps, 10);
}

}  // namespace
}  // namespace parity::logs

namespace parity::logs {
namespace {

KeyedSeries Printed(const std::vector<double>& values, Decimals decimals) {
  KeyedSeries s;
  for (size_t i = 0; i < values.size(); ++i) s.Add(static_cast<int64_t>(i) + 1, values[i], decimals);
  return s;
}

MetricCriteria Within(std::optional<double> abs, std::optional<double> rel = std::nullopt) {
  MetricCriteria c;
  c.metric = "loss";
  c.per_step = Tolerance{abs, rel};
  return c;
}

// ---- 3. a FAIL always lists its failing steps ----

TEST(Corpus, FailAfterManyUndecidableStepsListsTheFailingStep) {
  // 25 steps equal at 4 decimals (undecidable at 1e-5), then step 26 differs by 0.01.
  std::vector<double> b(26, 2.4725), c(26, 2.4725);
  c[25] = 2.4825;
  auto r = CompareSeries("loss", Printed(b, 4), Printed(c, 4), Within(1e-5), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->verdict, Verdict::kFail);
  EXPECT_EQ(r->uncertain_count, 25);
  EXPECT_EQ(r->first_exceeding_step, 26);
  ASSERT_EQ(r->offending.size(), 1u);
  EXPECT_EQ(r->offending[0].step, 26);
  EXPECT_TRUE(r->offending[0].certain);
  ASSERT_FALSE(r->checks.empty());
  EXPECT_NE(r->checks[0].message.find("first at step 26 (baseline 2.4725, candidate 2.4825"), std::string::npos)
      << r->checks[0].message;
}

// ---- 4. the rounding rule at its exact boundaries ----

TEST(Corpus, BoundEqualToTheToleranceIsDecidedTheSameEveryTime) {
  // 5 decimals on both sides: U = 1e-5. D = 2e-5 with tol 1e-5: D - U = tol, not beyond;
  // D + U = 3e-5 > tol, not within: undecidable, for every value, whatever the doubles' noise.
  std::vector<double> b, c;
  for (int i = 0; i < 2000; ++i) {
    const int64_t units = 100000 + 137 * i;  // 1.00000, 1.00137, ...
    b.push_back(static_cast<double>(units) / 1e5);
    c.push_back(static_cast<double>(units + 2) / 1e5);
  }
  auto r = CompareSeries("loss", Printed(b, 5), Printed(c, 5), Within(1e-5), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exceeding_count, 0) << "D - U == tol is never certainly beyond";
  EXPECT_EQ(r->uncertain_count, 2000);
  // D + U == tol (D = 2e-5, tol 3e-5): certainly within, every time.
  auto within = CompareSeries("loss", Printed(b, 5), Printed(c, 5), Within(3e-5), false);
  ASSERT_TRUE(within.ok());
  EXPECT_EQ(within->verdict, Verdict::kPass) << within->reason;
  EXPECT_EQ(within->uncertain_count, 0);
  // One quantum more: D = 3e-5, D - U = 2e-5 > 1e-5, certainly beyond, every time.
  for (auto& v : c) v += 1e-5;
  auto beyond = CompareSeries("loss", Printed(b, 5), Printed(c, 5), Within(1e-5), false);
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->exceeding_count, 2000);
}

TEST(Corpus, RelativeBoundAtItsBoundaryAndMixedDecimals) {
  // b = 2.0 (1 decimal, U_b = 0.05), c = 2.00 (2 decimals, U_c = 0.005): U = 0.055, D = 0.
  // rel: (D + U) / (|b| - U) = 0.055 / 1.945 = 0.02827...; with rel 0.03 certainly within,
  // with rel 0.02 not within, and not beyond (D - U < 0).
  auto pass = CompareSeries("loss", Printed({2.0}, 1), Printed({2.0}, 2), Within(std::nullopt, 0.03), false);
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->verdict, Verdict::kPass);
  auto undecided = CompareSeries("loss", Printed({2.0}, 1), Printed({2.0}, 2), Within(std::nullopt, 0.02), false);
  ASSERT_TRUE(undecided.ok());
  EXPECT_EQ(undecided->verdict, Verdict::kInconclusive);
  // Integers at their printed quantum (Megatron's "num zeros: 1299.0" has 1 decimal): 1299.0
  // vs 1300.0, D = 1, U = 0.1, abs 0.9 is beyond (D - U = 0.9 is not > 0.9: undecidable).
  auto edge = CompareSeries("loss", Printed({1299.0}, 1), Printed({1300.0}, 1), Within(0.9), false);
  ASSERT_TRUE(edge.ok());
  EXPECT_EQ(edge->verdict, Verdict::kInconclusive);
  auto beyond = CompareSeries("loss", Printed({1299.0}, 1), Printed({1300.0}, 1), Within(0.8), false);
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->verdict, Verdict::kFail);
}

TEST(Corpus, PerCompareStatisticsCountEqualStepsAndTheFirstDifference) {
  auto r = CompareSeries("loss", Printed({1.5, 2.5, 3.5, 4.5}, kExact), Printed({1.5, 2.5, 3.75, 4.5}, kExact),
                         Within(1e-5), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->equal_steps, 3);
  EXPECT_EQ(r->bitwise_equal_steps, 3);
  EXPECT_EQ(r->first_differing_step, 3);
  EXPECT_EQ(r->first_exceeding_step, 3);
  EXPECT_EQ(r->max_abs_step, 3);
  EXPECT_EQ(r->max_abs, 0.25);
}

}  // namespace
}  // namespace parity::logs

namespace parity::logs {
namespace {

// ---- 8. where logs come from: compressed files ----

TEST(Corpus, GzipXzAndZstdLogsReadAsTheirText) {
  ParseOptions o;
  o.sha256 = true;
  auto plain = ParseLog(Corpus("megatron_skipped.log"), o);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  for (const char* name : {"megatron_skipped.log.gz", "megatron_skipped_two_members.gz", "megatron_skipped.log.xz",
                           "megatron_skipped.log.zst", "megatron_skipped_two_frames.zst"}) {
    auto r = ParseLog(Corpus(name), o);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    EXPECT_EQ(r->format, LogFormat::kMegatron) << name;
    ASSERT_NE(r->Find("loss"), nullptr) << name;
    EXPECT_EQ(r->Find("loss")->series.keys, plain->Find("loss")->series.keys) << name;
    EXPECT_EQ(r->Find("loss")->series.values, plain->Find("loss")->series.values) << name;
    EXPECT_EQ(r->lines, plain->lines) << name;
    EXPECT_EQ(r->steps.seen, 12) << name;
    EXPECT_NE(r->format_detail.find("compressed"), std::string::npos) << r->format_detail;
    EXPECT_TRUE(r->warnings.empty() || r->warnings.front().code != "no_metric_lines") << name;
    // The digest is of the file as stored.
    EXPECT_NE(r->sha256, plain->sha256) << name;
  }
}

TEST(Corpus, CutZstdIsAnErrorNotAShortLog) {
  const std::string zst = ReadFile(Corpus("megatron_skipped_two_frames.zst"));
  ScratchDir dir;
  // Cut inside the second frame: the first frame's lines are there, the file is not whole.
  auto r = ParseLog(dir.Write("cut.log.zst", zst.substr(0, zst.size() - 20)), ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("zstd file cut off"), std::string::npos) << r.status().ToString();
  auto bad = ParseLog(dir.Write("bad.log.zst", zst.substr(0, 4) + std::string(64, 'x')), ParseOptions{});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not valid zstd"), std::string::npos) << bad.status().ToString();
}

TEST(Corpus, CutGzipIsAnErrorNotAShortLog) {
  const std::string gz = ReadFile(Corpus("megatron_skipped.log.gz"));
  ScratchDir dir;
  auto r = ParseLog(dir.Write("cut.log.gz", gz.substr(0, gz.size() - 12)), ParseOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gzip"), std::string::npos) << r.status().ToString();
}

// ---- #14 item 7: invalid UTF-8 is kept, escaped, never an internal error ----

TEST(Corpus, InvalidUtf8BytesAreKeptEscaped) {
  ScratchDir dir;
  std::string text = ReadFile(Corpus("torchtitan_log_freq_10.log"));
  text += "[rank0]:Traceback (most recent call last): caf\xC3 \xFF\xFE in train\n";
  text += "[rank0]:RuntimeError: bad byte \xC0\xAF here\n";
  ParseResult r = MustParse(dir.Write("bad.log", text));
  ASSERT_GE(r.errors.size(), 2u);
  for (const auto& e : r.errors) {
    EXPECT_EQ(e.text.find('\xFF'), std::string::npos) << e.text;
  }
  EXPECT_NE(r.errors[0].text.find("caf\\xC3 \\xFF\\xFE"), std::string::npos) << r.errors[0].text;
  EXPECT_EQ(r.errors[0].line, 13);
  ASSERT_NE(r.Find("loss"), nullptr);
  EXPECT_EQ(r.Find("loss")->series.size(), 11u);
}

}  // namespace
}  // namespace parity::logs
