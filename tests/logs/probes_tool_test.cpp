// compare_logs and parse_log with inject_prints' probes, through the tool adapters: the
// "probes" object in the structured result and in report.json (docs/CONTRACTS.md §3), a
// probes-only log, and parse_log results (series=true) handed back to compare_logs.
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "mcp-server/tool.h"
#include "tests/common/fake_tool_context.h"
#include "tests/logs/probe_runs.h"
#include "tests/logs/test_util.h"
#include "tools/compare_logs/compare_logs.h"
#include "tools/parse_log/parse_log.h"

namespace parity::tools {
namespace {

using json = nlohmann::json;
using logs::testing::RunProbedScript;
using logs::testing::ScratchDir;

TEST(CompareLogsProbes, ProbesOnlyLogsSucceedAndNameTheFirstDivergentProbe) {
  ScratchDir dir;
  const auto b = dir.Write("baseline.log", RunProbedScript(dir, "1.0", {"quiet"}));
  const auto c = dir.Write("candidate.log", RunProbedScript(dir, "1.5", {"quiet"}));
  parity::testing::FakeContext ctx(dir.path() / "report");
  auto r = MakeCompareLogsTool().handler({{"baseline", b.string()}, {"candidate", c.string()}, {"case", "probes"}}, ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "INCONCLUSIVE");
  const json& probes = r.structured["probes"];
  EXPECT_EQ(probes["baseline_count"], 20);
  EXPECT_EQ(probes["candidate_count"], 20);
  EXPECT_EQ(probes["matched"], 20);
  EXPECT_EQ(probes["divergent_count"], 4);
  EXPECT_EQ(probes["first_divergent"]["key"], "p2|after|z|1|0");
  EXPECT_EQ(probes["first_divergent"]["site"], "train.py:19");
  EXPECT_EQ(probes["first_divergent"]["fields"][0], "hash");
  EXPECT_NE(probes["first_divergent"]["baseline"]["hash"], probes["first_divergent"]["candidate"]["hash"]);
  EXPECT_NE(r.content[0]["text"].get<std::string>().find("p2|after|z|1|0"), std::string::npos);

  const auto report = json::parse(logs::testing::ReadFile(dir.path() / "report" / "probes" / "report.json"));
  EXPECT_EQ(report["probes"], probes);
  auto manifest = ledger::Read(dir.path() / "report");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->at("entries").back()["outcome"]["probes"]["first_divergent"], "p2|after|z|1|0");
}

TEST(CompareLogsProbes, ParseLogResultsCarryTheProbesBack) {
  ScratchDir dir;
  const auto b = dir.Write("baseline.log", RunProbedScript(dir, "1.0", {}));
  const auto c = dir.Write("candidate.log", RunProbedScript(dir, "1.5", {}));
  parity::testing::FakeContext ctx(dir.path() / "report");
  auto parsed = MakeParseLogTool().handler({{"paths", {b.string(), c.string()}}}, ctx);
  ASSERT_FALSE(parsed.is_error) << parsed.content.dump();
  const json& files = parsed.structured["files"];
  EXPECT_EQ(files[0]["probes"]["count"], 20);
  EXPECT_EQ(files[0]["probes"]["records"].size(), 20u);
  EXPECT_EQ(files[0]["probes"]["records"][0]["record"]["name"], "x");

  auto r = MakeCompareLogsTool().handler(
      {{"baseline", files[0]}, {"candidate", files[1]}, {"metrics", {"loss"}}, {"tolerance", {{"abs", 1e-3}}}}, ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "FAIL");  // the loss differs; the probes say where
  EXPECT_EQ(r.structured["probes"]["first_divergent"]["key"], "p2|after|z|1|0");
  EXPECT_EQ(r.structured["probes"]["first_divergent"]["stats_within_tolerance"], false);

  // Without the records the probes cannot be compared: a clear error, not an empty result.
  json no_records = files[0];
  no_records["probes"].erase("records");
  auto bad = MakeCompareLogsTool().handler({{"baseline", no_records}, {"candidate", files[1]}}, ctx);
  ASSERT_TRUE(bad.is_error);
  EXPECT_NE(bad.structured["error"].value("message", "").find("arguments.baseline.probes"), std::string::npos)
      << bad.structured.dump();
}

TEST(CompareLogsProbes, LogsWithoutProbesHaveNoProbesObject) {
  ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  auto r = MakeCompareLogsTool().handler({{"baseline", logs::testing::Fixture("tb_baseline").string()},
                                          {"candidate", logs::testing::Fixture("tb_candidate").string()}},
                                         ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_FALSE(r.structured.contains("probes"));
}

}  // namespace
}  // namespace parity::tools
