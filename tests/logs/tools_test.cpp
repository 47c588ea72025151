// parse_log and compare_logs through their adapters, with a fake ToolContext: argument
// errors name the JSON path, results match the contracts, the ledger gets its entry.
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "mcp-server/tool.h"
#include "tests/common/fake_tool_context.h"
#include "tests/logs/test_util.h"
#include "tools/compare_logs/compare_logs.h"
#include "tools/parse_log/parse_log.h"

namespace parity::tools {
namespace {

using json = nlohmann::json;
using logs::testing::Fixture;

std::string ErrorMessage(const mcp::ToolResult& r) {
  return r.structured.contains("error") ? r.structured["error"].value("message", "") : "";
}

TEST(ParseLogTool, ParsesAFileWithSeriesAndProgress) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  const mcp::Tool tool = MakeParseLogTool();
  EXPECT_EQ(tool.spec.name, "parse_log");
  auto r = tool.handler({{"paths", {Fixture("torchtitan_v022_color.log").string()}}}, ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  const json& file = r.structured["files"][0];
  EXPECT_EQ(file["format"], "torchtitan");
  EXPECT_EQ(file["metrics"][0]["name"], "loss");
  EXPECT_EQ(file["metrics"][0]["printed_decimals"], 5);
  EXPECT_EQ(file["metrics"][0]["steps"].size(), 10u);
  EXPECT_EQ(file["metrics"][0]["values"][0], 10.84523);
  EXPECT_EQ(file["success_marker"], true);
  EXPECT_GT(ctx.progress().size(), 0u);
  EXPECT_NE(r.content[0]["text"].get<std::string>().find("loss 5 decimals"), std::string::npos);
}

TEST(ParseLogTool, ArgumentErrorsNameTheJsonPath) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  const mcp::Tool tool = MakeParseLogTool();
  auto bad_type = tool.handler({{"paths", {1}}}, ctx);
  ASSERT_TRUE(bad_type.is_error);
  EXPECT_NE(ErrorMessage(bad_type).find("arguments.paths[0]"), std::string::npos) << ErrorMessage(bad_type);
  auto bad_format = tool.handler({{"paths", {"x.log"}}, {"format", "fairseq"}}, ctx);
  ASSERT_TRUE(bad_format.is_error);
  EXPECT_NE(ErrorMessage(bad_format).find("arguments.format"), std::string::npos);
  auto unknown = tool.handler({{"paths", {"x.log"}}, {"metric", {"loss"}}}, ctx);
  ASSERT_TRUE(unknown.is_error);
  EXPECT_NE(ErrorMessage(unknown).find("metric"), std::string::npos);
  auto missing = tool.handler({{"paths", {"/nonexistent/train.log"}}}, ctx);
  ASSERT_TRUE(missing.is_error);
  EXPECT_NE(ErrorMessage(missing).find("/nonexistent/train.log"), std::string::npos);
}

TEST(CompareLogsTool, PassWritesReportCsvAndLedger) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  const mcp::Tool tool = MakeCompareLogsTool();
  auto r = tool.handler({{"baseline", Fixture("tb_baseline").string()},
                         {"candidate", Fixture("tb_candidate").string()},
                         {"preset", "premerge"},
                         {"case", "toy_small"}},
                        ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "PASS");
  EXPECT_EQ(r.structured["metrics"]["loss"]["max_abs_step"], 7);
  const auto report = json::parse(logs::testing::ReadFile(dir.path() / "toy_small" / "report.json"));
  EXPECT_EQ(report["schema"], "parity.compare/1");
  EXPECT_EQ(report["preset"], "premerge");
  EXPECT_EQ(report["baseline"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "toy_small" / "diff_summary.csv"));
  auto manifest = ledger::Read(dir.path());
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const json& entry = (*manifest)["entries"].back();
  EXPECT_EQ(entry["tool"], "compare_logs");
  EXPECT_EQ(entry["action"], "compare");
  EXPECT_EQ(entry["outcome"]["verdict"], "PASS");
  EXPECT_EQ(entry["outputs"]["report"], "toy_small/report.json");
  EXPECT_EQ(r.structured["ledger_entry"], entry["id"]);
  EXPECT_EQ(entry["outcome"]["baseline_sha256"], report["baseline"]["sha256"]);
  // The recorded inputs are this tool's own arguments: replaying them makes the same call.
  EXPECT_EQ(entry["inputs"]["case"], "toy_small");
  auto replayed = tool.handler(entry["inputs"], ctx);
  EXPECT_FALSE(replayed.is_error) << replayed.content.dump();
  EXPECT_EQ(replayed.structured["verdict"], "PASS");
}

TEST(CompareLogsTool, BitwiseOnTensorBoardFailsAtTheUlp) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  auto r = MakeCompareLogsTool().handler({{"baseline", Fixture("tb_baseline").string()},
                                          {"candidate", Fixture("tb_candidate").string()},
                                          {"bitwise", true}},
                                         ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "FAIL");
  EXPECT_EQ(r.structured["metrics"]["loss"]["first_exceeding_step"], 7);
  EXPECT_EQ(r.structured["metrics"]["grad_norm"]["bitwise_equal"], true);
}

TEST(CompareLogsTool, PrintedLogsTooCoarseAreInconclusive) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  auto r = MakeCompareLogsTool().handler({{"baseline", Fixture("torchtitan_v021_plain.log").string()},
                                          {"candidate", Fixture("torchtitan_v021_plain.log").string()},
                                          {"metrics", {"loss"}}},
                                         ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "INCONCLUSIVE");
  EXPECT_NE(r.structured["verdict_reason"].get<std::string>().find("TensorBoard"), std::string::npos);
}

TEST(CompareLogsTool, AcceptsParseLogResultsAndReportsStepMismatch) {
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  auto parsed = MakeParseLogTool().handler(
      {{"paths", {Fixture("megatron.log").string(), Fixture("megatron_old.log").string()}}}, ctx);
  ASSERT_FALSE(parsed.is_error);
  auto r = MakeCompareLogsTool().handler(
      {{"baseline", parsed.structured["files"][0]}, {"candidate", parsed.structured["files"][1]}}, ctx);
  ASSERT_TRUE(r.is_error);
  EXPECT_NE(ErrorMessage(r).find("baseline 1..8 (7 steps), candidate 100..500 (5 steps)"), std::string::npos)
      << ErrorMessage(r);
  auto bad = MakeCompareLogsTool().handler({{"baseline", 3}, {"candidate", "x"}}, ctx);
  ASSERT_TRUE(bad.is_error);
  EXPECT_NE(ErrorMessage(bad).find("arguments.baseline"), std::string::npos);
  auto bad_tol = MakeCompareLogsTool().handler(
      {{"baseline", "a"}, {"candidate", "b"}, {"tolerances", {{"loss", {{"abs", -1}}}}}}, ctx);
  ASSERT_TRUE(bad_tol.is_error);
  EXPECT_NE(ErrorMessage(bad_tol).find("arguments.tolerances.loss.abs"), std::string::npos) << ErrorMessage(bad_tol);
}

}  // namespace
}  // namespace parity::tools

namespace parity::tools {
namespace {

TEST(ParseLogTool, InvalidUtf8InALogNeverFailsTheCall) {
  // #14 item 7: bytes in a metric key, an error line and a warning: escaped, the result
  // serialises (json::dump throws on invalid UTF-8), compare_logs works on the same log.
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  std::string text;
  for (int i = 1; i <= 3; ++i) {
    text += " iteration        " + std::to_string(i) +
            "/       3 | consumed samples:            8 | lm loss: 1.05895" + std::to_string(i) +
            "E+01 | gr\xE9" "d norm: 5.703 | number of skipped iterations:   0 |\n";
  }
  text += "Traceback (most recent call last): \xFF\xFE\n";
  const auto path = dir.Write("bad.log", text);
  auto r = MakeParseLogTool().handler({{"paths", {path.string()}}, {"metrics", {"*"}}}, ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_NO_THROW((void)r.structured.dump());
  EXPECT_NO_THROW((void)r.content.dump());
  const json& file = r.structured["files"][0];
  EXPECT_EQ(file["errors"][0]["line"], 4);
  bool escaped_key = false;
  for (const auto& m : file["metrics"]) escaped_key = escaped_key || m["name"] == "gr\\xE9d norm";
  EXPECT_TRUE(escaped_key) << file["metrics"].dump();
  auto c = MakeCompareLogsTool().handler({{"baseline", path.string()}, {"candidate", path.string()},
                                          {"metrics", {"loss"}}, {"report_dir", dir.path().string()}},
                                         ctx);
  ASSERT_FALSE(c.is_error) << c.content.dump();
  EXPECT_NO_THROW((void)c.structured.dump());
}

}  // namespace
}  // namespace parity::tools
