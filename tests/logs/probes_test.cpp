// inject_prints' probe lines in parse_log and compare_logs: real lines printed by the probe
// helper under PyTorch, read in the same pass as the metrics, paired across two runs, the
// first divergent probe named with both records; prefixes and colours, malformed lines and
// unpaired probes.
#include <gtest/gtest.h>

#include <sstream>

#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"
#include "domain/logs/probe_compare.h"
#include "domain/logs/probe_line.h"
#include "tests/logs/probe_runs.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

using json = nlohmann::json;
using testing::RunProbedScript;
using testing::ScratchDir;

ParseResult Parse(const std::filesystem::path& path) {
  auto r = ParseLog(path, ParseOptions{});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : ParseResult{};
}

// Every line of `log` with `prefix` in front and `suffix` behind.
std::string Decorate(const std::string& log, const std::string& prefix, const std::string& suffix) {
  std::istringstream in(log);
  std::string out, line;
  while (std::getline(in, line)) out += prefix + line + suffix + "\n";
  return out;
}

ProbeComparison CompareLogs(const ParseResult& b, const ParseResult& c) {
  return CompareProbes(b.probes, c.probes, std::nullopt);
}

TEST(ProbeLine, ReadsPythonNonFiniteTokensOutsideStrings) {
  EXPECT_EQ(QuotePythonNonFinite(R"({"a": NaN, "b": -Infinity, "c": "NaN Infinity", "d": [Infinity]})"),
            R"({"a": "nan", "b": "-inf", "c": "NaN Infinity", "d": ["inf"]})");
  EXPECT_EQ(QuotePythonNonFinite(R"({"s": "a \"NaN\" b", "x": 1})"), R"({"s": "a \"NaN\" b", "x": 1})");
}

TEST(ProbeLine, NamesTheMissingOrMistypedField) {
  std::string error;
  EXPECT_FALSE(ReadProbeLine(R"(PARITY_PROBE {"id": "p1", "site": "a.py:3", "when": "before", "call": 1})",
                             std::nullopt, 7, error));
  EXPECT_EQ(error, "field \"name\" is missing");
  EXPECT_FALSE(ReadProbeLine(R"(PARITY_PROBE {"id": "p1", "site": "a.py:3", "when": "later", "name": "x", "call": 1})",
                             std::nullopt, 7, error));
  EXPECT_NE(error.find("before, after, entry or return"), std::string::npos) << error;
  EXPECT_FALSE(ReadProbeLine(R"(PARITY_PROBE {"id": "p1", "site": "a.py:3", "when": "after", "name": "x", "call": "1"})",
                             std::nullopt, 7, error));
  EXPECT_NE(error.find("\"call\": expected integer"), std::string::npos) << error;
  EXPECT_FALSE(ReadProbeLine(R"(PARITY_PROBE {"id": "p1", "site": "a.py)", std::nullopt, 7, error));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
  auto ok = ReadProbeLine(R"([rank0]: PARITY_PROBE {"id": "p1", "site": "a.py:3", "when": "after", "name": "x", "call": 2})",
                          3, 9, error);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->Key(), "p1|after|x|2|3");  // no "rank" field: the line's prefix gives it
  EXPECT_EQ(ok->line, 9);
}

TEST(ProbeCompare, RunsDifferingInOneValueNameTheFirstDivergentProbeWithBothValues) {
  ScratchDir dir;
  const auto base_log = dir.Write("baseline.log", RunProbedScript(dir, "1.0", {}));
  const auto cand_log = dir.Write("candidate.log", RunProbedScript(dir, "1.5", {}));
  const ParseResult b = Parse(base_log);
  const ParseResult c = Parse(cand_log);
  // Metrics and probes from the same pass.
  ASSERT_NE(b.Find("loss"), nullptr);
  EXPECT_EQ(b.Find("loss")->series.size(), 2u);
  EXPECT_TRUE(b.success_marker);
  // Per step: x, w, y, z, meta + its 4 items, n = 10 records.
  EXPECT_EQ(b.probes.records.size(), 20u);
  EXPECT_EQ(b.probes.malformed_total, 0);
  EXPECT_EQ(b.errors_total, 0);

  const ProbeComparison cmp = CompareLogs(b, c);
  EXPECT_EQ(cmp.matched, 20);
  // z (calls 1, 2) and meta[3] (calls 1, 2) differ; x, w, y, the NaN tensor do not.
  EXPECT_EQ(cmp.divergent_count, 4);
  ASSERT_FALSE(cmp.divergent.empty());
  const ProbeDivergence& first = cmp.divergent.front();
  EXPECT_EQ(first.baseline.Key(), "p2|after|z|1|0");
  EXPECT_EQ(first.baseline.site, "train.py:19");
  ASSERT_FALSE(first.fields.empty());
  EXPECT_EQ(first.fields.front(), "hash");
  for (const char* stat : {"sum", "mean", "max", "norm"}) {
    EXPECT_NE(std::find(first.fields.begin(), first.fields.end(), stat), first.fields.end()) << stat;
  }
  EXPECT_EQ(std::find(first.fields.begin(), first.fields.end(), "shape"), first.fields.end());
  const double bsum = first.baseline.record["sum"].get<double>();
  const double csum = first.candidate.record["sum"].get<double>();
  EXPECT_GT(bsum, 0);
  EXPECT_NEAR(csum, 1.5 * bsum, 1e-5 * csum);
  EXPECT_NE(first.baseline.record["hash"], first.candidate.record["hash"]);
  EXPECT_TRUE(first.note.empty());

  const json j = ProbeComparisonJson(cmp);
  EXPECT_EQ(j["first_divergent"]["key"], "p2|after|z|1|0");
  EXPECT_EQ(j["first_divergent"]["when"], "after");
  EXPECT_EQ(j["first_divergent"]["call"], 1);
  EXPECT_EQ(j["first_divergent"]["rank"], 0);
  EXPECT_EQ(j["first_divergent"]["baseline"]["sum"], bsum);
  EXPECT_EQ(j["first_divergent"]["candidate"]["sum"], csum);
  ASSERT_EQ(j["next_divergent"].size(), 3u);
  const json& meta = j["next_divergent"][0];
  EXPECT_EQ(meta["key"], "p3|after|meta[3]|1|0");
  EXPECT_EQ(meta["baseline"]["value"], "1.0");
  EXPECT_EQ(meta["candidate"]["value"], "1.5");
  EXPECT_EQ(meta["fields"][0], "hash");
  EXPECT_EQ(j["unmatched_baseline"], json::array());
  EXPECT_EQ(j["malformed"], json::array());
  EXPECT_NE(cmp.Summary().find("p2|after|z|1|0 at train.py:19"), std::string::npos) << cmp.Summary();
}

TEST(ProbeCompare, IdenticalRunsHaveNoDivergentProbe) {
  ScratchDir dir;
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.0", {})));
  const ProbeComparison cmp = CompareLogs(b, c);
  EXPECT_EQ(cmp.matched, 20);
  EXPECT_EQ(cmp.divergent_count, 0);
  const json j = ProbeComparisonJson(cmp);
  EXPECT_TRUE(j["first_divergent"].is_null());
  EXPECT_EQ(j["next_divergent"], json::array());
  // The NaN tensor's statistics were printed as bare NaN and read back.
  const auto& n = b.probes.records[9].record;
  EXPECT_EQ(b.probes.records[9].name, "n");
  EXPECT_EQ(n["sum"], "nan");
  EXPECT_EQ(n["max"], "nan");
}

TEST(ProbeCompare, PrefixesColoursTimestampsAndCrlfDoNotChangeTheProbes) {
  ScratchDir dir;
  const std::string plain = RunProbedScript(dir, "1.0", {});
  const std::string candidate = RunProbedScript(dir, "1.5", {});
  const auto b = Parse(dir.Write("plain.log", plain));
  const auto torchrun = Parse(dir.Write("torchrun.log", Decorate(candidate, "[rank0]:", "")));
  const auto coloured = Parse(dir.Write("colour.log", Decorate(candidate, "\x1b[32m2026-11-30 08:00:00,123 - ", "\x1b[0m\r")));
  for (const ParseResult* c : {&torchrun, &coloured}) {
    EXPECT_EQ(c->probes.records.size(), 20u) << c->path;
    EXPECT_EQ(c->probes.malformed_total, 0) << c->path;
    const ProbeComparison cmp = CompareLogs(b, *c);
    EXPECT_EQ(cmp.matched, 20) << c->path;
    EXPECT_EQ(cmp.divergent_count, 4) << c->path;
    ASSERT_FALSE(cmp.divergent.empty());
    EXPECT_EQ(cmp.divergent.front().baseline.Key(), "p2|after|z|1|0");
  }
}

TEST(ProbeCompare, MalformedLinesAreCountedWithTheirLineNumbers) {
  ScratchDir dir;
  std::string log = RunProbedScript(dir, "1.0", {});
  const size_t lines_before = static_cast<size_t>(std::count(log.begin(), log.end(), '\n'));
  log += "[rank0]: PARITY_PROBE {\"id\": \"p9\", \"site\": \"train.py:3\", \"wh\n";  // cut off
  log += "PARITY_PROBE {\"id\": \"p9\", \"site\": \"train.py:3\", \"when\": \"after\", \"call\": 1}\n";
  log += "PARITY_PROBE not json at all\n";
  const auto b = Parse(dir.Write("baseline.log", log));
  EXPECT_EQ(b.probes.records.size(), 20u);
  ASSERT_EQ(b.probes.malformed_total, 3);
  EXPECT_EQ(b.probes.malformed[0].line, static_cast<int64_t>(lines_before + 1));
  EXPECT_NE(b.probes.malformed[0].error.find("not valid JSON"), std::string::npos);
  EXPECT_EQ(b.probes.malformed[1].line, static_cast<int64_t>(lines_before + 2));
  EXPECT_EQ(b.probes.malformed[1].error, "field \"name\" is missing");
  EXPECT_EQ(b.probes.malformed[2].line, static_cast<int64_t>(lines_before + 3));
  // Reported as warnings too, and never taken for error lines.
  EXPECT_EQ(std::count_if(b.warnings.begin(), b.warnings.end(),
                          [](const ParseWarning& w) { return w.code == "malformed_probe"; }),
            3);
  EXPECT_EQ(b.errors_total, 0);

  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.0", {})));
  const json j = ProbeComparisonJson(CompareLogs(b, c));
  ASSERT_EQ(j["malformed"].size(), 3u);
  EXPECT_EQ(j["malformed"][0]["side"], "baseline");
  EXPECT_EQ(j["malformed"][0]["line"], lines_before + 1);
  EXPECT_EQ(j["malformed_count"], 3);
  EXPECT_EQ(j["divergent_count"], 0);
}

TEST(ProbeCompare, UnpairedProbesAreListedAndAnUnpairedBeforeProbeIsNoted) {
  ScratchDir dir;
  // The baseline probes p0 (a before-probe) that the candidate never prints; the candidate
  // also differs in the scale.
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {"with_p0"})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.5", {})));
  const ProbeComparison cmp = CompareLogs(b, c);
  EXPECT_EQ(cmp.baseline_count, 22);
  EXPECT_EQ(cmp.matched, 20);
  EXPECT_EQ(cmp.unmatched_baseline, (std::vector<std::string>{"p0|before|x0|1|0", "p0|before|x0|2|0"}));
  EXPECT_TRUE(cmp.unmatched_candidate.empty());
  ASSERT_FALSE(cmp.divergent.empty());
  EXPECT_NE(cmp.divergent.front().note.find("p0|before|x0|1|0"), std::string::npos) << cmp.divergent.front().note;

  // The other way round: the candidate's extra probes are listed, and with no divergence
  // the unpaired before-probe is a note of its own.
  const auto same = Parse(dir.Write("same.log", RunProbedScript(dir, "1.0", {})));
  const ProbeComparison reversed = CompareLogs(same, b);
  EXPECT_EQ(reversed.unmatched_candidate, (std::vector<std::string>{"p0|before|x0|1|0", "p0|before|x0|2|0"}));
  EXPECT_EQ(reversed.divergent_count, 0);
  const ProbeComparison missing_before = CompareLogs(b, same);
  EXPECT_EQ(missing_before.divergent_count, 0);
  ASSERT_EQ(missing_before.notes.size(), 1u);
  EXPECT_NE(missing_before.notes[0].find("no partner"), std::string::npos) << missing_before.notes[0];
}

TEST(ProbeCompare, ToleranceReportsTheStatisticsButEqualityStaysBitwise) {
  ScratchDir dir;
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.0000001", {})));
  const ProbeComparison loose = CompareProbes(b.probes, c.probes, Tolerance{1e-3, std::nullopt});
  ASSERT_FALSE(loose.divergent.empty());  // the bytes differ: divergent whatever the tolerance
  const ProbeDivergence& first = loose.divergent.front();
  EXPECT_EQ(first.baseline.Key(), "p2|after|z|1|0");
  ASSERT_TRUE(first.stats_within_tolerance.has_value());
  EXPECT_TRUE(*first.stats_within_tolerance);
  const json j = ProbeComparisonJson(loose);
  EXPECT_TRUE(j["first_divergent"]["stats"]["sum"]["within"].get<bool>());
  EXPECT_LT(j["first_divergent"]["stats"]["sum"]["abs"].get<double>(), 1e-3);
  const ProbeComparison tight = CompareProbes(b.probes, c.probes, Tolerance{0.0, std::nullopt});
  EXPECT_FALSE(*tight.divergent.front().stats_within_tolerance);
  EXPECT_FALSE(CompareLogs(b, c).divergent.front().stats_within_tolerance.has_value());
}

TEST(ProbeCompare, NamesTheFirstProbeBeyondTheTolerance) {
  ScratchDir dir;
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.0000001", {})));
  // z's bytes move within 1e-3; the tuple holding the scale prints a different value, which
  // no tolerance covers.
  const ProbeComparison loose = CompareProbes(b.probes, c.probes, Tolerance{1e-3, std::nullopt});
  ASSERT_FALSE(loose.divergent.empty());
  EXPECT_EQ(loose.divergent.front().baseline.Key(), "p2|after|z|1|0");
  EXPECT_TRUE(loose.divergent.front().within_tolerance);
  ASSERT_TRUE(loose.first_beyond_tolerance.has_value());
  EXPECT_EQ(loose.first_beyond_tolerance->baseline.name.rfind("meta", 0), 0u) << loose.first_beyond_tolerance->baseline.Key();
  EXPECT_FALSE(loose.first_beyond_tolerance->within_tolerance);
  EXPECT_GT(loose.beyond_tolerance_count, 0);
  EXPECT_LT(loose.beyond_tolerance_count, loose.divergent_count);
  const json j = ProbeComparisonJson(loose);
  EXPECT_EQ(j["first_beyond_tolerance"]["key"], loose.first_beyond_tolerance->baseline.Key());
  EXPECT_EQ(j["beyond_tolerance_count"], loose.beyond_tolerance_count);
  EXPECT_EQ(j["tolerance"]["abs"], 1e-3);
  EXPECT_TRUE(j["first_divergent"]["within_tolerance"].get<bool>());

  // A zero tolerance: the first divergent probe is the first beyond it.
  const ProbeComparison tight = CompareProbes(b.probes, c.probes, Tolerance{0.0, std::nullopt});
  ASSERT_TRUE(tight.first_beyond_tolerance.has_value());
  EXPECT_EQ(tight.first_beyond_tolerance->baseline.Key(), "p2|after|z|1|0");
  EXPECT_EQ(tight.beyond_tolerance_count, tight.divergent_count);
  // Without a tolerance nothing of it is reported.
  const ProbeComparison bitwise = CompareLogs(b, c);
  EXPECT_FALSE(bitwise.first_beyond_tolerance.has_value());
  EXPECT_FALSE(ProbeComparisonJson(bitwise).contains("first_beyond_tolerance"));
}

TEST(CompareRuns, ProbesOnlyLogsAreComparedWithAnInconclusiveVerdict) {
  ScratchDir dir;
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {"quiet"})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.5", {"quiet"})));
  EXPECT_TRUE(b.metrics.empty());
  auto cmp = CompareRuns(b, c, *BuildCriteria({}), std::nullopt, false);
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  EXPECT_EQ(cmp->verdict, Verdict::kInconclusive);
  EXPECT_NE(cmp->reason.find("no metric was compared"), std::string::npos) << cmp->reason;
  EXPECT_NE(cmp->reason.find("p2|after|z|1|0"), std::string::npos) << cmp->reason;
  const json report = CompareReportJson("probes", b, c, *cmp);
  EXPECT_EQ(report["probes"]["first_divergent"]["key"], "p2|after|z|1|0");
  EXPECT_EQ(report["metrics"], json::object());

  // Metrics on one side only are still an error, probes or not.
  const auto with_metrics = Parse(dir.Write("metrics.log", RunProbedScript(dir, "1.0", {})));
  auto one_sided = CompareRuns(with_metrics, c, *BuildCriteria({}), std::nullopt, false);
  ASSERT_FALSE(one_sided.ok());
  EXPECT_NE(one_sided.status().message().find("is not in the candidate"), std::string::npos);
}

TEST(CompareRuns, MetricVerdictIsUnchangedByProbes) {
  ScratchDir dir;
  const auto b = Parse(dir.Write("baseline.log", RunProbedScript(dir, "1.0", {})));
  const auto c = Parse(dir.Write("candidate.log", RunProbedScript(dir, "1.5", {})));
  CriteriaRequest req;
  req.metrics = {"loss"};
  auto cmp = CompareRuns(b, c, *BuildCriteria(req), std::nullopt, false);
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  EXPECT_EQ(cmp->verdict, Verdict::kFail);  // the loss differs
  ASSERT_TRUE(cmp->probes.has_value());
  EXPECT_EQ(cmp->probes->divergent_count, 4);
  // Logs without probes get no "probes" object.
  ParseResult no_probes = b;
  no_probes.probes = ProbeLog{};
  ParseResult no_probes_c = c;
  no_probes_c.probes = ProbeLog{};
  auto plain = CompareRuns(no_probes, no_probes_c, *BuildCriteria(req), std::nullopt, false);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->probes.has_value());
  EXPECT_FALSE(CompareReportJson("x", no_probes, no_probes_c, *plain).contains("probes"));
}

}  // namespace
}  // namespace parity::logs
