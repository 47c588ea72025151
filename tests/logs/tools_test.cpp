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

TEST(CompareLogsTool, FoldersOfPerRankLogsCompareEveryRank) {
  // tests/logs/corpus/per_rank_srun: ranks 2-3 of the candidate move by 0.01 from step 10,
  // ranks 0-1 print the placeholder loss (rank_files_test.cpp has the domain cases).
  const auto corpus = std::filesystem::path(PARITY_LOGS_FIXTURES).parent_path() / "corpus" / "per_rank_srun";
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  const mcp::Tool tool = MakeCompareLogsTool();
  auto r = tool.handler({{"baseline", (corpus / "baseline").string()},
                         {"candidate", (corpus / "candidate_moved" / "train_*.log").string()},
                         {"tolerance", {{"abs", 1e-3}}},
                         {"case", "ranks"}},
                        ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["verdict"], "FAIL");
  EXPECT_EQ(r.structured["metrics"]["loss"]["first_exceeding_step"], 10);
  const auto report = json::parse(logs::testing::ReadFile(dir.path() / "ranks" / "report.json"));
  ASSERT_EQ(report["baseline"]["files"].size(), 4u);
  EXPECT_EQ(report["baseline"]["files"][2]["ranks"], json::array({2}));
  EXPECT_EQ(report["baseline"]["files"][2]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(report["candidate"]["sha256"].get<std::string>().size(), 64u);

  // A rank file that is a link out of the user's folders is refused, not read.
  logs::testing::ScratchDir allowed, outside;
  const auto secret = outside.Write("train_1.log", "step:  1  loss: 1.00000\n");
  allowed.Write("run/train_0.log", "step:  1  loss: 1.00000\n");
  std::filesystem::create_symlink(secret, allowed.path() / "run" / "train_1.log");
  policy::Policy only;
  only.AddFolder(allowed.path(), true, "test");
  only.AddFolder(dir.path(), true, "test");
  ctx.set_policy(only);
  auto refused = tool.handler({{"baseline", (allowed.path() / "run").string()},
                               {"candidate", (allowed.path() / "run").string()}},
                              ctx);
  ASSERT_TRUE(refused.is_error);
  EXPECT_NE(ErrorMessage(refused).find("train_1.log"), std::string::npos) << refused.content.dump();
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

#include "tools/parse_log/series_resource.h"

namespace parity::tools {
namespace {

TEST(ParseLogTool, LongSeriesGoToAFileAndComeBackInPages) {
  // #15 case 11: a long log's series are not returned inline; the result stays small, the
  // file holds them all, compare_logs reads it back, the resource serves it in pages.
  logs::testing::ScratchDir dir;
  parity::testing::FakeContext ctx(dir.path());
  std::string text;
  char line[512];
  const int kSteps = 6000;
  for (int i = 1; i <= kSteps; ++i) {
    std::snprintf(line, sizeof line,
                  " iteration %8d/%8d | consumed samples: %12d | lm loss: %.6E | grad norm: %.3f | "
                  "number of skipped iterations:   0 |\n",
                  i, kSteps, i * 8, 10.0 - i * 1e-4, 5.0 + (i % 7) * 0.125);
    text += line;
  }
  const auto path = dir.Write("long.log", text);
  auto r = MakeParseLogTool().handler({{"paths", {path.string()}}}, ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump().substr(0, 2000);
  const json& file = r.structured["files"][0];
  EXPECT_LT(r.structured.dump().size(), 30000u);
  const json& loss = file["metrics"][0];
  EXPECT_EQ(loss["points"], kSteps);
  EXPECT_FALSE(loss.contains("steps"));
  EXPECT_EQ(loss["series_inline"], false);
  ASSERT_EQ(loss["sample"]["steps"].size(), 100u);
  EXPECT_EQ(loss["sample"]["steps"][0], 1);
  EXPECT_EQ(loss["sample"]["steps"][99], kSteps);
  ASSERT_TRUE(file.contains("series_file"));
  EXPECT_EQ(file["series_rows"], 2 * kSteps);
  EXPECT_EQ(file["series_pages"], 3);  // 12,000 rows, 5,000 a page
  int links = 0;
  for (const auto& block : r.content) links += block["type"] == "resource_link" ? 1 : 0;
  EXPECT_EQ(links, 3);
  const std::string csv = logs::testing::ReadFile(file["series_file"].get<std::string>());
  EXPECT_EQ(csv.substr(0, 32), "rank,metric,step,value,decimals\n");
  EXPECT_NE(csv.find("\n,loss,1,9.9999,6\n"), std::string::npos) << csv.substr(0, 200);

  // compare_logs on the bounded result itself: the series come from the file.
  auto c = MakeCompareLogsTool().handler({{"baseline", file}, {"candidate", path.string()}, {"metrics", {"loss"}},
                                          {"report_dir", dir.path().string()}},
                                         ctx);
  ASSERT_FALSE(c.is_error) << c.content.dump().substr(0, 2000);
  EXPECT_EQ(c.structured["metrics"]["loss"]["steps_compared"], kSteps);
  EXPECT_EQ(c.structured["metrics"]["loss"]["equal_steps"], kSteps);

  // The pages, as a client reads them.
  const auto t = MakeSeriesResourceTemplate();
  const std::string name = std::filesystem::path(file["series_file"].get<std::string>()).filename().string();
  auto page = t.read(SeriesUri(name, 2), {{"file", name}, {"page", "2"}}, ctx);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const std::string body = (*page)[0]["text"];
  EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), 1 + 2000);
  auto outside = t.read("x", {{"file", "..%2Fetc"}, {"page", "0"}}, ctx);
  EXPECT_FALSE(outside.ok());
}

}  // namespace
}  // namespace parity::tools
