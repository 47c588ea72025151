// The determinism contract's pieces without training: the noise envelope and the verdict
// against it (domain/logs/noise.h), the baseline cache (domain/workflow/baseline_cache.h) and
// premerge.json's noise / cache / resume_at keys. Expected values are worked out by hand in
// the comments.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "domain/logs/compare_report.h"
#include "domain/logs/noise.h"
#include "domain/logs/presets.h"
#include "domain/workflow/baseline_cache.h"
#include "domain/workflow/premerge_config.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

logs::ParseResult Series(const std::string& path, const std::vector<double>& loss, const std::vector<double>& grad_norm) {
  logs::ParseResult r;
  r.path = path;
  r.text_log = false;  // as TensorBoard events: values stored in full
  for (auto [name, values] : {std::pair{"loss", &loss}, std::pair{"grad_norm", &grad_norm}}) {
    logs::MetricResult m;
    m.name = name;
    for (size_t i = 0; i < values->size(); ++i) m.series.Add(static_cast<int64_t>(i + 1), (*values)[i], logs::kExact);
    r.metrics.push_back(std::move(m));
  }
  return r;
}

// Three baseline runs of four steps. loss ranges: 0, 0, 0.25, 0.125 (carried: 0, 0, 0.25,
// 0.25), largest relative range 0.25 / 3 = 1/12; grad_norm ranges 0, 0.5, 0, 0 (carried 0,
// 0.5, 0.5, 0.5), largest relative range 0.5 / 5 = 0.1. The runs differ, so with F = 3:
// loss envelope 3 * max(carried, |b1| / 12, ulp) = 0.25, 0.5, 0.75, 1.0;
// grad_norm 3 * max(carried, 0.1 * 5, ulp) = 1.5 at every step.
struct Fixture {
  logs::ParseResult r1 = Series("r1", {1.0, 2.0, 3.0, 4.0}, {5.0, 5.0, 5.0, 5.0});
  logs::ParseResult r2 = Series("r2", {1.0, 2.0, 3.25, 4.0}, {5.0, 5.5, 5.0, 5.0});
  logs::ParseResult r3 = Series("r3", {1.0, 2.0, 3.0, 4.125}, {5.0, 5.0, 5.0, 5.0});

  Result<logs::NoiseEnvelopes> Envelopes(double factor = 3.0) {
    return logs::ComputeNoiseEnvelopes({&r1, &r2, &r3}, {"loss", "grad_norm"}, factor);
  }
  Result<logs::RunComparison> Judge(const logs::ParseResult& candidate) {
    auto criteria = logs::BuildCriteria({});
    if (!criteria.ok()) return criteria.status();
    PARITY_ASSIGN_OR_RETURN(logs::RunComparison c, logs::CompareRuns(r1, candidate, *criteria, std::nullopt, false));
    PARITY_ASSIGN_OR_RETURN(logs::NoiseEnvelopes e, Envelopes());
    PARITY_RETURN_IF_ERROR(logs::ApplyNoiseEnvelopes(c, e, r1, candidate));
    return c;
  }
};

TEST(NoiseEnvelope, RangeCarriedForwardTimesTheFactorFromTheFirstDivergence) {
  Fixture f;
  auto e = f.Envelopes();
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->runs, 3);
  ASSERT_TRUE(e->first_divergent_step.has_value());
  EXPECT_EQ(*e->first_divergent_step, 2);
  EXPECT_EQ(e->first_divergent_metric, "grad_norm");
  const auto* loss = e->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->range, (std::vector<double>{0, 0, 0.25, 0.125}));
  EXPECT_DOUBLE_EQ(loss->max_relative_range, 1.0 / 12);
  ASSERT_EQ(loss->envelope.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(loss->envelope[i], (std::vector<double>{0.25, 0.5, 0.75, 1.0})[i]) << i;
  EXPECT_EQ(loss->max_range, 0.25);
  EXPECT_EQ(*loss->max_range_step, 3);
  for (double v : e->Find("grad_norm")->envelope) EXPECT_DOUBLE_EQ(v, 1.5);
  json j = logs::NoiseJson(*e);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["bitwise_identical"], false);
  EXPECT_DOUBLE_EQ(j["metrics"]["loss"]["steps"][2]["envelope"].get<double>(), 0.75);
  EXPECT_NE(j["statistic"].get<std::string>().find("3 x max"), std::string::npos);
  EXPECT_DOUBLE_EQ(j["metrics"]["grad_norm"]["max_relative_range"].get<double>(), 0.1);
}

TEST(NoiseEnvelope, CandidateWithinTheNoisePasses) {
  Fixture f;
  // Differences: loss 0, 2^-22, 0.5 (<= 0.75), 0.95 (<= 1.0); grad_norm 0, 1 (<= 1.5), 0, 0.
  auto c = f.Judge(Series("c", {1.0, 2.0 + std::ldexp(1.0, -22), 3.5, 4.95}, {5.0, 6.0, 5.0, 5.0}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->verdict, logs::Verdict::kPass) << c->reason;
  EXPECT_NE(c->reason.find("noise"), std::string::npos) << c->reason;
  EXPECT_EQ(c->metrics[0].envelope.size(), 4u);
  // A fixed 1e-5 would have failed it: the calibration is what passes it.
  auto fixed = logs::CompareRuns(f.r1, Series("c", {1.0, 2.0 + std::ldexp(1.0, -22), 3.5, 4.95}, {5.0, 6.0, 5.0, 5.0}),
                                 *logs::BuildCriteria({}), std::nullopt, false);
  EXPECT_EQ(fixed->verdict, logs::Verdict::kFail);
}

TEST(NoiseEnvelope, NoiseSeenAnywhereWidensEveryStep) {
  Fixture f;
  // Step 1: the three runs agree there, but they differ later: the noise is pooled, so step 1's
  // envelope is 0.25, not 0 (a few runs may coincide by chance: rounding noise is discrete).
  auto c = f.Judge(Series("c", {1.2, 2.0, 3.0, 4.0}, {5.0, 5.0, 5.0, 5.0}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->verdict, logs::Verdict::kPass) << c->reason;
  auto beyond = f.Judge(Series("c", {1.3, 2.0, 3.0, 4.0}, {5.0, 5.0, 5.0, 5.0}));
  EXPECT_EQ(beyond->verdict, logs::Verdict::kFail);
  EXPECT_EQ(*beyond->metrics[0].first_exceeding_step, 1);
  EXPECT_EQ(beyond->metrics[0].exceeding_count, 1);
}

TEST(NoiseEnvelope, RunsThatNeverDifferMeanABitwiseVerdict) {
  Fixture f;
  auto criteria = logs::BuildCriteria({});
  logs::ParseResult c = Series("c", {1.0 + std::ldexp(1.0, -23), 2.0, 3.0, 4.0}, {5.0, 5.0, 5.0, 5.0});
  auto compared = logs::CompareRuns(f.r1, c, *criteria, std::nullopt, false);
  auto e = logs::ComputeNoiseEnvelopes({&f.r1, &f.r1, &f.r1}, {"loss", "grad_norm"}, 5.0);
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE(logs::ApplyNoiseEnvelopes(*compared, *e, f.r1, c).ok());
  EXPECT_EQ(compared->verdict, logs::Verdict::kFail) << "one ulp off where the runs repeat bit for bit";
  EXPECT_EQ(*compared->metrics[0].first_exceeding_step, 1);
}

TEST(NoiseEnvelope, BeyondTheNoiseFailsAtTheFirstStepBeyond) {
  Fixture f;
  // Step 4: |5.1 - 4.0| = 1.1 > 1.0; grad_norm step 3: 6.6 - 5 = 1.6 > 1.5.
  auto c = f.Judge(Series("c", {1.0, 2.0, 3.5, 5.1}, {5.0, 5.0, 6.6, 5.0}));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->verdict, logs::Verdict::kFail);
  EXPECT_EQ(*c->metrics[0].first_exceeding_step, 4);
  EXPECT_EQ(*c->metrics[1].first_exceeding_step, 3);
  EXPECT_NE(c->reason.find("beyond the noise, first at step 4"), std::string::npos) << c->reason;
  EXPECT_NE(c->reason.find("> envelope 1)"), std::string::npos) << c->reason;
}

TEST(NoiseEnvelope, IdenticalRunsHaveAZeroEnvelope) {
  Fixture f;
  auto e = logs::ComputeNoiseEnvelopes({&f.r1, &f.r1, &f.r1}, {"loss"}, 3.0);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->first_divergent_step.has_value());
  EXPECT_EQ(e->Find("loss")->envelope, (std::vector<double>{0, 0, 0, 0}));
}

TEST(NoiseEnvelope, ErrorsNameTheRunAndStep) {
  Fixture f;
  logs::ParseResult short_run = Series("short", {1.0, 2.0, 3.0}, {5.0, 5.0, 5.0});
  auto e = logs::ComputeNoiseEnvelopes({&f.r1, &short_run}, {"loss"}, 3.0);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("baseline run 2 (short) has no step 4"), std::string::npos) << e.status().message();
  EXPECT_FALSE(logs::ComputeNoiseEnvelopes({&f.r1}, {"loss"}, 3.0).ok());
  EXPECT_FALSE(logs::ComputeNoiseEnvelopes({&f.r1, &f.r2}, {"loss"}, 0.5).ok());
}

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/parity-cache-test-XXXXXX";
    root_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path Write(const std::string& name, const std::string& content) {
    fs::path p = root_ / "report" / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  workflow::CachedRun RunOf(const std::string& log, const std::string& events) {
    workflow::CachedRun r;
    r.log = Write(log, "step 1 loss 5.5\n");
    r.events = Write(events, std::string(1000, 'e'));
    r.ledger_entry = {{"id", "e0001"}, {"command", {{"argv", {"bash", "run.sh"}}}}};
    r.report_dir = (root_ / "report").string();
    r.worktree = "/wt";
    return r;
  }
  fs::path root_;
};

TEST_F(CacheTest, StoreLookupListClear) {
  workflow::BaselineCache cache(root_ / "cache");
  json material = {{"tree", "abc"}, {"steps", 6}};
  const std::string key = workflow::BaselineCache::KeyOf(material);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, workflow::BaselineCache::KeyOf({{"tree", "abc"}, {"steps", 7}}));
  auto miss = cache.Lookup(key);
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
  ASSERT_TRUE(cache.Store(key, material, {RunOf("b1.log", "tb1/events.1"), RunOf("b2.log", "tb2/events.2")}).ok());
  auto hit = cache.Lookup(key);
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  ASSERT_TRUE(hit->has_value());
  const auto& e = **hit;
  ASSERT_EQ(e.runs.size(), 2u);
  EXPECT_EQ(e.runs[1].log.filename(), "b2.log");
  EXPECT_EQ(e.runs[1].events.filename(), "events.2");
  EXPECT_EQ(e.runs[0].ledger_entry["id"], "e0001");
  EXPECT_EQ(e.runs[0].worktree, "/wt");
  EXPECT_EQ(e.material, material);
  auto sha = workflow::FileSha256(e.runs[0].log);
  EXPECT_EQ(*sha, e.runs[0].log_sha256);
  auto listed = cache.List();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_GT((*listed)[0].bytes, 2000u);
  auto cleared = cache.Clear();
  EXPECT_EQ(cleared->first, 1u);
  EXPECT_TRUE(cache.List()->empty());
}

TEST_F(CacheTest, AChangedFileMakesTheEntryUnusable) {
  workflow::BaselineCache cache(root_ / "cache");
  const std::string key = workflow::BaselineCache::KeyOf({{"k", 1}});
  ASSERT_TRUE(cache.Store(key, {{"k", 1}}, {RunOf("b1.log", "tb/events")}).ok());
  fs::path stored = (*cache.Lookup(key))->runs[0].log;
  std::ofstream(stored, std::ios::app) << "edited\n";
  auto hit = cache.Lookup(key);
  ASSERT_FALSE(hit.ok());
  EXPECT_NE(hit.status().message().find("b1.log has sha256"), std::string::npos) << hit.status().message();
  EXPECT_FALSE(fs::exists(stored.parent_path().parent_path())) << "the unusable entry is removed";
  EXPECT_FALSE(cache.Lookup(key)->has_value());
}

TEST_F(CacheTest, TheFolderIsBoundedLeastRecentlyUsedFirst) {
  // Entries of ~600 KiB under a 1 MiB bound: the second store evicts the first.
  workflow::BaselineCache cache(root_ / "cache", 1u << 20);
  auto big = [&](const std::string& name) {
    workflow::CachedRun r = RunOf(name + ".log", name + "/events");
    std::ofstream(r.events, std::ios::binary) << std::string(600 << 10, 'x');
    return r;
  };
  const std::string k1 = workflow::BaselineCache::KeyOf({{"k", 1}}), k2 = workflow::BaselineCache::KeyOf({{"k", 2}});
  ASSERT_TRUE(cache.Store(k1, {{"k", 1}}, {big("a")}).ok());
  auto evicted = cache.Store(k2, {{"k", 2}}, {big("b")});
  ASSERT_TRUE(evicted.ok()) << evicted.status().ToString();
  EXPECT_EQ(*evicted, std::vector<std::string>{k1});
  EXPECT_FALSE(cache.Lookup(k1)->has_value());
  EXPECT_TRUE(cache.Lookup(k2)->has_value());
  // An entry larger than the bound on its own is refused, and nothing is left of it.
  workflow::BaselineCache tiny(root_ / "tiny", 1u << 19);
  EXPECT_FALSE(tiny.Store(k1, {{"k", 1}}, {big("c")}).ok());
  EXPECT_TRUE(tiny.List()->empty());
}

TEST(PremergeDeterminismConfig, NoiseCacheAndResumeKeys) {
  json j = {{"baseline", "main"}, {"steps", 10},
            {"configs", {"toy_small", {{"name", "toy_tp2"}, {"resume_at", 4}}}},
            {"noise", {{"repeats", 3}, {"safety_factor", 4}}},
            {"cache", {{"dir", "cache"}, {"max_bytes", 1 << 30}}}};
  auto c = workflow::ParsePremergeConfig(j, "premerge.json", "/base");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->noise.repeats, 3);
  EXPECT_EQ(c->noise.safety_factor, 4);
  EXPECT_FALSE(c->configs[0].resume_at.has_value());
  EXPECT_EQ(*c->configs[1].resume_at, 4);
  EXPECT_EQ(*c->cache.dir, fs::path("/base/cache"));
  EXPECT_EQ(c->cache.max_bytes, uint64_t{1} << 30);
  EXPECT_TRUE(c->cache.enabled);

  auto err = [](json v) {
    auto r = workflow::ParsePremergeConfig(v, "premerge.json", "/base");
    return r.ok() ? std::string() : r.status().message();
  };
  json two = j;
  two["noise"]["repeats"] = 2;
  EXPECT_NE(err(two).find("premerge.json.noise.repeats: must be at least 3"), std::string::npos) << err(two);
  json late = j;
  late["configs"][1]["resume_at"] = 10;
  EXPECT_NE(err(late).find("premerge.json.configs[1].resume_at"), std::string::npos) << err(late);
  json unknown = j;
  unknown["noise"]["runs"] = 3;
  EXPECT_NE(err(unknown).find("noise"), std::string::npos) << err(unknown);
  json none = {{"baseline", "main"}};
  auto d = workflow::ParsePremergeConfig(none, "premerge.json", "/base");
  EXPECT_EQ(d->noise.repeats, 0);
  EXPECT_FALSE(d->cache.dir.has_value());
}

}  // namespace
}  // namespace parity
