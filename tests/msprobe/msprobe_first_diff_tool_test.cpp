// The tool adapter: argument errors name the JSON path; a real call writes hunt.json, the
// compare table and a ledger entry, and returns the hunt JSON as structured content.
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "mcp-server/tool.h"
#include "tests/common/fake_tool_context.h"
#include "tests/msprobe/fixtures.h"
#include "tools/msprobe_first_diff/msprobe_first_diff.h"

namespace parity::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string ErrorText(const mcp::ToolResult& r) { return r.content.dump(); }

// The real statistics-mode dumps, their recorded paths mapped onto the fixture folder.
json StatisticsArgs(const fs::path& fixtures) {
  return {{"baseline_dump", (fixtures / "dumps/baseline/statistics_L1").string()},
          {"candidate_dump", (fixtures / "dumps/candidate/statistics_L1").string()},
          {"step", 0},
          {"path_map", {{"/home/ma-user/work/toy-block/", fixtures.string()}}}};
}

TEST(MsprobeFirstDiffTool, ArgumentErrorsNameThePath) {
  msprobe::testing::TempDir dir;
  parity::testing::FakeContext ctx(dir.path());
  auto tool = MakeMsprobeFirstDiffTool();
  auto missing = tool.handler(json{{"baseline_dump", "/x"}}, ctx);
  EXPECT_TRUE(missing.is_error);
  EXPECT_NE(ErrorText(missing).find("arguments.candidate_dump"), std::string::npos) << ErrorText(missing);
  auto typo = tool.handler(json{{"compare_result", "/x.csv"}, {"criterion", "loose"}}, ctx);
  EXPECT_TRUE(typo.is_error);
  EXPECT_NE(ErrorText(typo).find("arguments.criterion"), std::string::npos) << ErrorText(typo);
  auto unknown = tool.handler(json{{"compare_result", "/x.csv"}, {"rnak", 1}}, ctx);
  EXPECT_TRUE(unknown.is_error);
  EXPECT_NE(ErrorText(unknown).find("rnak"), std::string::npos) << ErrorText(unknown);
  auto tolerance = tool.handler(json{{"compare_result", "/x.csv"}, {"criterion", "tolerance"}}, ctx);
  EXPECT_TRUE(tolerance.is_error);
  auto absent = tool.handler(json{{"compare_result", (dir.path() / "none.csv").string()}}, ctx);
  EXPECT_TRUE(absent.is_error);
  EXPECT_NE(ErrorText(absent).find("none.csv"), std::string::npos);
}

TEST(MsprobeFirstDiffTool, WritesHuntJsonLedgerAndTheTableOnRequest) {
  fs::path fixtures = msprobe::testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  msprobe::testing::TempDir dir;
  parity::testing::FakeContext ctx(dir.path() / "numerical_report");
  auto tool = MakeMsprobeFirstDiffTool();
  json args = StatisticsArgs(fixtures);
  auto result = tool.handler(args, ctx);
  ASSERT_FALSE(result.is_error) << result.content.dump();
  const json& out = result.structured;
  EXPECT_EQ(out["schema"], "parity.hunt/1");
  EXPECT_EQ(out["first_divergence"]["api"], "Functional.gelu.0.forward");
  EXPECT_EQ(out["first_divergence"]["source"]["mapped_by"], "path_map");
  fs::path report = dir.path() / "numerical_report";
  EXPECT_TRUE(fs::exists(report / "hunt/hunt.json"));
  EXPECT_FALSE(fs::exists(report / "hunt/compare_table.csv"));  // only when asked
  EXPECT_TRUE(out["compare_table"].is_null());
  auto manifest = ledger::Read(report);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const json& entry = (*manifest)["entries"].back();
  EXPECT_EQ(entry["tool"], "msprobe_first_diff");
  EXPECT_EQ(entry["outcome"]["status"], "ok");
  EXPECT_EQ(entry["outputs"]["hunt"], "hunt/hunt.json");
  EXPECT_NE(result.content.dump().find("train.py:64"), std::string::npos) << result.content.dump();

  // compare_table: true writes the table; the answer goes out as progress before the table
  // is complete, and the result is the same answer.
  args["compare_table"] = true;
  result = tool.handler(args, ctx);
  ASSERT_FALSE(result.is_error) << result.content.dump();
  fs::path table = report / "hunt/compare_table.csv";
  EXPECT_EQ(result.structured["compare_table"], table.string());
  ASSERT_TRUE(fs::exists(table));
  EXPECT_GT(fs::file_size(table), 10000u);
  bool answered = false;
  for (const auto& step : ctx.progress()) {
    if (step.message.find("First divergent API: Functional.gelu.0.forward") != std::string::npos &&
        step.message.find("Writing the compare table") != std::string::npos) {
      answered = true;
    }
  }
  EXPECT_TRUE(answered);
  auto again = ledger::Read(report);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["entries"].back()["outputs"]["compare_table"], "hunt/compare_table.csv");
  // With a compare result there is no table of parity's to write.
  auto refused = tool.handler(json{{"compare_result", "/x.csv"}, {"compare_table", true}}, ctx);
  EXPECT_TRUE(refused.is_error);
  EXPECT_NE(ErrorText(refused).find("arguments.compare_table"), std::string::npos) << ErrorText(refused);
}

// PrecisionComparer's parse_code_dir: only frames whose path holds the fragment are the
// user's code. The real dumps' stacks record /home/ma-user/work/toy-block/train.py.
TEST(MsprobeFirstDiffTool, UserCodeFragmentsDecideWhichFrameIsTheUsers) {
  fs::path fixtures = msprobe::testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  msprobe::testing::TempDir dir;
  parity::testing::FakeContext ctx(dir.path() / "numerical_report");
  auto tool = MakeMsprobeFirstDiffTool();
  json args = StatisticsArgs(fixtures);
  args["user_code"] = {"/toy-block/"};
  auto matched = tool.handler(args, ctx);
  ASSERT_FALSE(matched.is_error) << matched.content.dump();
  const json& hit = matched.structured["first_divergence"];
  EXPECT_EQ(hit["user_frame"]["file"], "/home/ma-user/work/toy-block/train.py");
  EXPECT_EQ(hit["user_frame"]["line"], 64);
  EXPECT_TRUE(hit["stack_note"].is_null());
  for (const json& f : hit["stack"]) {
    if (f.contains("file")) EXPECT_EQ(f["user"], f["file"].get<std::string>().find("/toy-block/") != std::string::npos) << f;
  }

  args["user_code"] = {"/PanGu/"};
  auto missed = tool.handler(args, ctx);
  ASSERT_FALSE(missed.is_error) << missed.content.dump();
  const json& miss = missed.structured["first_divergence"];
  EXPECT_EQ(miss["api"], "Functional.gelu.0.forward");
  EXPECT_TRUE(miss["user_frame"].is_null());
  EXPECT_TRUE(miss["source"].is_null());
  EXPECT_NE(miss["stack_note"].get<std::string>().find("\"/PanGu/\""), std::string::npos) << miss["stack_note"];

  args["user_code"] = {""};
  auto empty = tool.handler(args, ctx);
  EXPECT_TRUE(empty.is_error);
  EXPECT_NE(ErrorText(empty).find("arguments.user_code[0]"), std::string::npos) << ErrorText(empty);
}

}  // namespace
}  // namespace parity::tools
