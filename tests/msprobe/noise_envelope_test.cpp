// The calibrated criterion (domain/msprobe/noise_envelope.h) on the real msprobe dumps of
// tests/fixtures/msprobe-real. Statistics mode: the baseline's "repeat" and the candidates
// are the real baseline dump with chosen statistics moved (the dump stays msprobe's own file
// otherwise), so the expected answers follow from the numbers:
//   repeat:      Torch.matmul.0.forward.output.0 Max + 2e-6 (its run-to-run noise)
//   within:      the same Max + 4e-6 (inside 3 x 2e-6) and Functional.linear.3.forward.output.0
//                Mean + 1e-3 (a row the repeat never moved: any difference counts)
//                -> default criterion: matmul.0 first; calibrated: linear.3
//   beyond:      the same Max + 1e-5 (beyond 6e-6) -> calibrated: matmul.0
//   noise only:  the same Max + 2e-6 alone -> calibrated: no divergence
// md5 mode: the real rerun of the baseline (md5_L1_rerun) as the repeat, the real GELU
// candidate: the first divergence stays Functional.gelu.0.forward.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/msprobe/analyze.h"
#include "tests/msprobe/fixtures.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;

fs::path Real() { return fs::path(PARITY_SOURCE_DIR) / "tests/fixtures/msprobe-real/dumps"; }

// ordered_json: the entries keep their order (execution order), which the walk follows.
nlohmann::ordered_json Load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::ordered_json::parse(in);
}

// The real baseline with `edits` (entry, statistic, delta on output 0) written to dir/name;
// the baseline itself is written the same way, so that only the edits differ in print.
fs::path Moved(const TempDir& dir, const std::string& name, const std::vector<std::tuple<std::string, std::string, double>>& edits) {
  nlohmann::ordered_json d = Load(Real() / "baseline/statistics_L1/step0/rank0/dump.json");
  for (const auto& [entry, stat, delta] : edits) {
    nlohmann::ordered_json& out = d["data"][entry]["output"][0];
    out[stat] = out[stat].get<double>() + delta;
  }
  fs::path file = dir.path() / name / "dump.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << d.dump(1);
  return file;
}

json Analyze(const fs::path& baseline, const fs::path& candidate, std::vector<fs::path> repeats, const TempDir& out) {
  AnalyzeOptions o;
  o.baseline_dump = baseline;
  o.candidate_dump = candidate;
  o.output_dir = out.path();
  if (!repeats.empty()) {
    o.criteria.mode = DiffCriteria::Mode::kCalibrated;
    o.noise_dumps = std::move(repeats);
  }
  auto r = AnalyzeFirstDiff(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json::object();
}

std::string FirstApi(const json& hunt) {
  return hunt.value("found", false) ? hunt["first_divergence"]["api"].get<std::string>() : "none";
}

class NoiseEnvelopeTest : public ::testing::Test {
 protected:
  const std::string matmul = "Torch.matmul.0.forward", linear = "Functional.linear.3.forward";
  TempDir dir_, out_;
  fs::path baseline_ = Moved(dir_, "baseline", {});
};

TEST_F(NoiseEnvelopeTest, ARowInsideItsOwnNoiseIsNotTheDivergence) {
  fs::path repeat = Moved(dir_, "repeat", {{matmul, "Max", 2e-6}});
  fs::path within = Moved(dir_, "within", {{matmul, "Max", 4e-6}, {linear, "Mean", 1e-3}});
  EXPECT_EQ(FirstApi(Analyze(baseline_, within, {}, out_)), matmul);
  json calibrated = Analyze(baseline_, within, {repeat}, out_);
  EXPECT_EQ(FirstApi(calibrated), linear) << calibrated.value("explanation", "");
  EXPECT_EQ(calibrated["criteria"]["mode"], "calibrated");
  EXPECT_EQ(calibrated["criteria"]["noise"]["repeats"], 1);
  EXPECT_EQ(calibrated["criteria"]["noise"]["rows"]["moving"], 1);
  EXPECT_EQ(calibrated["source"]["baseline_repeats"].size(), 1u);
}

TEST_F(NoiseEnvelopeTest, BeyondTheSafetyFactorIsTheDivergenceAndNoiseAloneIsNone) {
  fs::path repeat = Moved(dir_, "repeat", {{matmul, "Max", 2e-6}});
  fs::path beyond = Moved(dir_, "beyond", {{matmul, "Max", 1e-5}});
  EXPECT_EQ(FirstApi(Analyze(baseline_, beyond, {repeat}, out_)), matmul);
  fs::path noise = Moved(dir_, "noise", {{matmul, "Max", 2e-6}});
  json none = Analyze(baseline_, noise, {repeat}, out_);
  EXPECT_EQ(FirstApi(none), "none") << none.dump(1).substr(0, 2000);
  EXPECT_NE(none.value("explanation", "").find("calibrated"), std::string::npos) << none.value("explanation", "");
}

TEST_F(NoiseEnvelopeTest, Md5RerunOfTheBaselineKeepsTheRealGeluDivergence) {
  json hunt = Analyze(Real() / "baseline/md5_L1", Real() / "candidate/md5_L1", {Real() / "baseline/md5_L1_rerun"}, out_);
  EXPECT_EQ(FirstApi(hunt), "Functional.gelu.0.forward") << hunt.value("explanation", "");
  EXPECT_GE(hunt["criteria"]["noise"]["rows"]["noisy_crc"].get<int>(), 1);  // the README's Tensor.add_ input
}

TEST_F(NoiseEnvelopeTest, TheCriterionNeedsRepeatsOfTheSameMode) {
  AnalyzeOptions o;
  o.baseline_dump = baseline_;
  o.candidate_dump = baseline_;
  o.criteria.mode = DiffCriteria::Mode::kCalibrated;
  auto none = AnalyzeFirstDiff(o);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("noise_dumps"), std::string::npos) << none.status().ToString();
  o.noise_dumps = {Real() / "baseline/md5_L1"};
  auto mixed = AnalyzeFirstDiff(o);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("md5"), std::string::npos) << mixed.status().ToString();
}

}  // namespace
}  // namespace parity::msprobe
