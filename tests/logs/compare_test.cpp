// The comparison core and compare_logs' domain: verdicts with the printed precision taken
// into account, presets, coverage errors, and the report files.
#include <cmath>

#include <gtest/gtest.h>

#include "domain/logs/compare.h"
#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using testing::Fixture;

KeyedSeries Series(std::vector<double> values, Decimals decimals, int64_t first = 1) {
  KeyedSeries s;
  for (size_t i = 0; i < values.size(); ++i) s.Add(first + static_cast<int64_t>(i), values[i], decimals);
  return s;
}

MetricCriteria AbsTolerance(double abs) {
  MetricCriteria c;
  c.metric = "loss";
  c.per_step = Tolerance{abs, std::nullopt};
  return c;
}

TEST(CompareSeries, IdenticalAtFiveDecimalsResolvesOneEMinusFive) {
  // Half a unit of the 5th decimal on each side: the true difference is at most 1e-5.
  auto r = CompareSeries("loss", Series({3.24405, 3.1}, 5), Series({3.24405, 3.1}, 5), AbsTolerance(1e-5), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->verdict, Verdict::kPass);
  EXPECT_TRUE(r->identical);
  EXPECT_FALSE(r->full_precision);
  EXPECT_NE(r->reason.find("identical as printed"), std::string::npos) << r->reason;
}

TEST(CompareSeries, IdenticalAtFourDecimalsCannotResolveOneEMinusFive) {
  auto r = CompareSeries("loss", Series({4.9925, 4.5}, 4), Series({4.9925, 4.5}, 4), AbsTolerance(1e-5), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kInconclusive);
  EXPECT_EQ(r->uncertain_count, 2);
  EXPECT_NE(r->reason.find("TensorBoard"), std::string::npos) << r->reason;
  EXPECT_NE(r->reason.find("4 decimals"), std::string::npos) << r->reason;
}

TEST(CompareSeries, ClearDifferenceFailsWhateverThePrecision) {
  auto r = CompareSeries("loss", Series({4.9925, 4.5000, 4.4}, 4), Series({4.9925, 4.5012, 4.4}, 4),
                         AbsTolerance(1e-5), false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kFail);
  EXPECT_EQ(r->first_exceeding_step, 2);
  EXPECT_EQ(r->exceeding_count, 1);
  ASSERT_EQ(r->offending.size(), 1u);  // undecidable steps are not listed once a failure is certain
  EXPECT_EQ(r->offending[0].step, 2);
  EXPECT_NEAR(r->offending[0].abs, 0.0012, 1e-12);
  EXPECT_EQ(r->max_abs_step, 2);
}

TEST(CompareSeries, BitwiseNeedsFullPrecision) {
  MetricCriteria c;
  c.metric = "loss";
  c.bitwise = true;
  // Printed with 5 decimals: equal as printed is not bitwise equal (torchtitan #2517).
  auto printed = CompareSeries("loss", Series({3.24405}, 5), Series({3.24405}, 5), c, false);
  ASSERT_TRUE(printed.ok());
  EXPECT_EQ(printed->verdict, Verdict::kInconclusive);
  // Stored in full (TensorBoard): decides.
  auto exact = CompareSeries("loss", Series({3.244051f}, kExact), Series({3.244051f}, kExact), c, false);
  EXPECT_EQ(exact->verdict, Verdict::kPass);
  EXPECT_NE(exact->reason.find("bitwise equal"), std::string::npos);
  const float one_ulp_up = std::nextafter(3.244051f, 4.0f);
  auto differs = CompareSeries("loss", Series({3.244051f}, kExact), Series({one_ulp_up}, kExact), c, false);
  EXPECT_EQ(differs->verdict, Verdict::kFail);
  // Printed in the same format, any printed difference is a real one.
  auto printed_diff = CompareSeries("loss", Series({3.24405}, 5), Series({3.24406}, 5), c, false);
  EXPECT_EQ(printed_diff->verdict, Verdict::kFail);
}

TEST(CompareSeries, RelativeToleranceAndNaN) {
  MetricCriteria c;
  c.metric = "grad_norm";
  c.per_step = Tolerance{std::nullopt, 0.01};
  auto r = CompareSeries("grad_norm", Series({100.0, 2.0}, kExact), Series({100.5, 2.03}, kExact), c, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kFail);  // 1.5% at step 2
  EXPECT_EQ(r->first_exceeding_step, 2);
  const double nan = std::nan("");
  c.per_step = Tolerance{1e-5, std::nullopt};
  auto both_nan = CompareSeries("grad_norm", Series({nan, 1.0}, kExact), Series({nan, 1.0}, kExact), c, false);
  EXPECT_EQ(both_nan->verdict, Verdict::kPass);
  EXPECT_EQ(both_nan->baseline_non_finite.nan, 1);
  auto one_nan = CompareSeries("grad_norm", Series({1.0, 1.0}, kExact), Series({nan, 1.0}, kExact), c, false);
  EXPECT_EQ(one_nan->verdict, Verdict::kFail);
  EXPECT_EQ(one_nan->first_exceeding_step, 1);
}

TEST(CompareSeries, DifferentStepsAreAnErrorWithBothRanges) {
  auto r = CompareSeries("loss", Series({1, 2, 3}, 5), Series({1, 2}, 5), AbsTolerance(1e-5), false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("baseline 1..3 (3 steps), candidate 1..2 (2 steps)"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("step 3 is only in the baseline"), std::string::npos);
  auto common = CompareSeries("loss", Series({1, 2, 3}, 5), Series({1, 2}, 5), AbsTolerance(1e-5), true);
  ASSERT_TRUE(common.ok());
  EXPECT_EQ(common->steps_compared, 2);
  EXPECT_EQ(common->steps_dropped, 1);
}

TEST(Presets, TorchtitanNpuAggregateCriteria) {
  CriteriaRequest req;
  req.preset = "torchtitan-npu";
  auto criteria = BuildCriteria(req);
  ASSERT_TRUE(criteria.ok());
  const MetricCriteria& loss = criteria->metrics[0];
  ASSERT_EQ(loss.aggregates.size(), 4u);
  // First step: abs 0.004 < 0.005, rel 0.2% < 0.5%; mean abs 0.008 < 0.01, mean rel 0.4% < 1%.
  auto pass = CompareSeries("loss", Series({2.0, 2.0}, kExact), Series({2.004, 2.012}, kExact), loss, false);
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->verdict, Verdict::kPass) << pass->reason;
  auto fail = CompareSeries("loss", Series({2.0, 2.0}, kExact), Series({2.012, 2.0}, kExact), loss, false);
  EXPECT_EQ(fail->verdict, Verdict::kFail);  // first-step abs 0.012
  const MetricCriteria& gn = criteria->metrics[1];
  auto gn_pass = CompareSeries("grad_norm", Series({1.0, 1.0}, kExact), Series({1.1, 1.05}, kExact), gn, false);
  EXPECT_EQ(gn_pass->verdict, Verdict::kPass);  // mean rel 7.5% <= 10%
}

TEST(Presets, UnknownPresetAndBadToleranceAreErrors) {
  CriteriaRequest req;
  req.preset = "strict";
  EXPECT_FALSE(BuildCriteria(req).ok());
  CriteriaRequest neg;
  neg.tolerance = Tolerance{-1.0, std::nullopt};
  EXPECT_FALSE(BuildCriteria(neg).ok());
  CriteriaRequest pc;
  pc.preset = "precision-comparer";
  auto c = BuildCriteria(pc);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->require_success_marker);
  EXPECT_DOUBLE_EQ(*c->metrics[0].per_step->abs, 1e-3);
}

TEST(CompareRuns, TensorBoardOneUlpDifference) {
  ParseOptions o;
  auto b = ParseLog(Fixture("tb_baseline"), o);
  auto c = ParseLog(Fixture("tb_candidate"), o);
  ASSERT_TRUE(b.ok() && c.ok());
  CriteriaRequest tol;
  auto within = CompareRuns(*b, *c, *BuildCriteria(tol), std::nullopt, false);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->verdict, Verdict::kPass);
  EXPECT_EQ(within->metrics[0].max_abs_step, 7);
  CriteriaRequest bitwise;
  bitwise.bitwise = true;
  auto bw = CompareRuns(*b, *c, *BuildCriteria(bitwise), std::nullopt, false);
  ASSERT_TRUE(bw.ok());
  EXPECT_EQ(bw->verdict, Verdict::kFail);
  EXPECT_EQ(bw->metrics[0].first_exceeding_step, 7);
}

TEST(CompareRuns, MissingMetricNamesTheSide) {
  auto b = ParseLog(Fixture("torchtitan_v021_plain.log"), ParseOptions{});
  ParseOptions only_loss;
  only_loss.metrics = {"loss"};
  auto c = ParseLog(Fixture("torchtitan_v021_plain.log"), only_loss);
  ASSERT_TRUE(b.ok() && c.ok());
  auto r = CompareRuns(*b, *c, *BuildCriteria({}), std::nullopt, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'grad_norm' is not in the candidate"), std::string::npos)
      << r.status().message();
}

TEST(CompareRuns, PrecisionComparerNeedsTheSuccessMarker) {
  auto b = ParseLog(Fixture("torchtitan_v021_plain.log"), ParseOptions{});
  ASSERT_TRUE(b.ok());
  CriteriaRequest req;
  req.preset = "precision-comparer";
  auto r = CompareRuns(*b, *b, *BuildCriteria(req), req.preset, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kInconclusive);
  EXPECT_NE(r->reason.find("training success"), std::string::npos);
}

TEST(CompareReport, WritesReportJsonAndCsv) {
  auto b = ParseLog(Fixture("torchtitan_v022_color.log"), ParseOptions{});
  ASSERT_TRUE(b.ok());
  ParseResult c = *b;
  c.metrics[0].series.values[2] += 0.001;  // loss at step 3
  auto cmp = CompareRuns(*b, c, *BuildCriteria({}), std::nullopt, false);
  ASSERT_TRUE(cmp.ok());
  EXPECT_EQ(cmp->verdict, Verdict::kFail);
  testing::ScratchDir dir;
  const auto report = CompareReportJson("toy", *b, c, *cmp);
  ASSERT_TRUE(WriteCompareReport(dir.path() / "toy", report, *cmp).ok());
  const auto j = nlohmann::json::parse(testing::ReadFile(dir.path() / "toy" / "report.json"));
  EXPECT_EQ(j["schema"], "parity.compare/1");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["metrics"]["loss"]["first_exceeding_step"], 3);
  EXPECT_EQ(j["metrics"]["loss"]["printed_decimals"]["baseline"], 5);
  // grad_norm is printed %7.4f: identical, but 4 decimals cannot resolve 1e-5.
  EXPECT_EQ(j["metrics"]["grad_norm"]["verdict"], "INCONCLUSIVE");
  EXPECT_EQ(j["baseline"]["steps"], nlohmann::json::array({1, 10}));
  const std::string csv = testing::ReadFile(dir.path() / "toy" / "diff_summary.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "step,loss_baseline,loss_candidate,loss_abs_diff,loss_rel_diff,grad_norm_baseline,"
            "grad_norm_candidate,grad_norm_abs_diff,grad_norm_rel_diff");
  EXPECT_NE(csv.find("\n3,9.98721,9.98820999"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 11);
}

}  // namespace
}  // namespace parity::logs
