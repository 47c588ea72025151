// A whole dump tree (tests/fixtures/msprobe-multirank: the REAL msprobe on 4 gloo processes
// of the toy trainer's model, its feed-forward sharded over the ranks; 2 steps). The candidate
// changes one line that only the last rank runs (it adds w2's bias before the all-reduce), so
// rank 3 diverges first, at the Torch.add it inserts (train_tp.py line 75), before the call
// where ranks 0-2 first see anything. Expectations worked out by hand from train_tp.py:
// - step 0: rank 3 inserts Torch.add.2.forward before its all-reduce (Distributed.all_reduce.0,
//   the 28th call of the baseline); the all-reduce's sum is bitwise the same on every rank, so
//   ranks 0-2 differ only in backward: b2 is unused there, so their FFN module's parameter
//   gradients have no b2 row (Module.layers.0.feed_forward.ParallelFeedForward.parameters_grad.0).
// - step 1: b2 differs after step 0's update, so ranks 0-2 first diverge at the all-reduce's
//   output (an operator whose inputs are equal), rank 3 again at its inserted add.
#include <gtest/gtest.h>

#include <fstream>

#include "domain/msprobe/compare.h"
#include "domain/msprobe/dump.h"
#include "domain/msprobe/scan.h"
#include "mcp-server/tool.h"
#include "tests/common/fake_tool_context.h"
#include "tests/msprobe/fixtures.h"
#include "tools/msprobe_first_diff/msprobe_first_diff.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;

fs::path Fixture() { return fs::path(PARITY_SOURCE_DIR) / "tests/fixtures/msprobe-multirank"; }

AnalyzeOptions TreeOptions(const fs::path& root) {
  AnalyzeOptions o;
  o.baseline_dump = root / "dumps/baseline";
  o.candidate_dump = root / "dumps/candidate";
  o.locate.worktree = Fixture();
  return o;
}

// A copy of the fixture's dumps, to remove ranks from.
fs::path CopyDumps(const TempDir& dir) {
  fs::copy(Fixture() / "dumps", dir.path() / "dumps", fs::copy_options::recursive);
  return dir.path();
}

const json* PerRank(const json& scan, int step, int rank) {
  for (const json& r : scan["per_rank"]) {
    if (r["step"] == step && r["rank"] == rank) return &r;
  }
  return nullptr;
}

TEST(MultiRank, NamesTheFirstRankItsOpAndLine) {
  ASSERT_TRUE(IsDumpTree(Fixture() / "dumps/baseline", Fixture() / "dumps/candidate"));
  TempDir out;
  AnalyzeOptions o = TreeOptions(Fixture());
  o.output_dir = out.path();
  auto hunt = AnalyzeDumpTree(o, {});
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const json& scan = (*hunt)["scan"];
  EXPECT_EQ(scan["pairs"], 8);
  EXPECT_EQ(scan["first"]["step"], 0);
  EXPECT_EQ(scan["first"]["rank"], 3);
  EXPECT_EQ(scan["first"]["api"], "Torch.add.2.forward");
  EXPECT_EQ(scan["first"]["inserted"], true);
  EXPECT_EQ(scan["first"]["position"], 27);  // before the 28th baseline call, the all-reduce
  EXPECT_TRUE(scan["tied_ranks"].empty());
  // The full answer is rank 3's at step 0: its op, line and the dump files it read.
  EXPECT_EQ((*hunt)["source"]["candidate"]["step"], 0);
  EXPECT_EQ((*hunt)["source"]["candidate"]["rank"], 3);
  const json& first = (*hunt)["first_divergence"];
  EXPECT_EQ(first["api"], "Torch.add.2.forward");
  EXPECT_EQ(first["verdict"], "unmatched");
  ASSERT_TRUE(first["user_frame"].is_object()) << first.dump(2);
  EXPECT_EQ(fs::path(first["user_frame"]["file"].get<std::string>()).filename(), "train_tp.py");
  EXPECT_EQ(first["user_frame"]["line"], 75);
  EXPECT_EQ(first["source"]["line_text"].get<std::string>().find("partial = torch.add(partial, self.b2)") !=
                std::string::npos,
            true)
      << first["source"].dump(2);
  EXPECT_NE((*hunt)["explanation"].get<std::string>().find("step0, rank 3 diverges first"), std::string::npos)
      << (*hunt)["explanation"];
  std::ifstream written(out.path() / "hunt.json");
  EXPECT_TRUE(json::parse(written).contains("scan"));
}

TEST(MultiRank, SummarisesEveryRankAndStep) {
  auto hunt = AnalyzeDumpTree(TreeOptions(Fixture()), {});
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const json& scan = (*hunt)["scan"];
  ASSERT_EQ(scan["per_rank"].size(), 8u);
  for (int step : {0, 1}) {
    for (int rank = 0; rank < 4; ++rank) {
      SCOPED_TRACE("step " + std::to_string(step) + " rank " + std::to_string(rank));
      const json* r = PerRank(scan, step, rank);
      ASSERT_NE(r, nullptr);
      EXPECT_TRUE((*r)["found"].get<bool>());
      if (rank == 3) {
        EXPECT_EQ((*r)["api"], "Torch.add.2.forward");
      } else if (step == 0) {
        EXPECT_EQ((*r)["api"], "Module.layers.0.feed_forward.ParallelFeedForward.parameters_grad.0");
        EXPECT_GT((*r)["position"].get<int>(), 27);  // in backward: after rank 3's
      } else {
        EXPECT_EQ((*r)["api"], "Distributed.all_reduce.0.forward");
        EXPECT_EQ((*r)["verdict"], "operator");
        EXPECT_EQ((*r)["position"], 27);
        EXPECT_EQ((*r)["inserted"], false);
      }
    }
  }
  EXPECT_NE(scan["explanation"].get<std::string>().find("later at that step: rank 0"), std::string::npos)
      << scan["explanation"];
}

TEST(MultiRank, TiedRanksAreNamedAndTheLowestChosen) {
  TempDir dir;
  fs::path root = CopyDumps(dir);
  for (const char* side : {"baseline", "candidate"}) {
    for (const char* step : {"step0", "step1"}) fs::remove_all(root / "dumps" / side / step / "rank3");
  }
  auto hunt = AnalyzeDumpTree(TreeOptions(root), {});
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const json& scan = (*hunt)["scan"];
  EXPECT_EQ(scan["first"]["step"], 0);
  EXPECT_EQ(scan["first"]["rank"], 0);
  EXPECT_EQ(scan["tied_ranks"], json::array({0, 1, 2}));
  EXPECT_NE(scan["explanation"].get<std::string>().find("ranks 0, 1 and 2 first diverge at that same call"),
            std::string::npos)
      << scan["explanation"];
}

TEST(MultiRank, ARankOnOneSideOnlyIsAnErrorNamingIt) {
  TempDir dir;
  fs::path root = CopyDumps(dir);
  fs::remove_all(root / "dumps/candidate/step1/rank2");
  fs::remove_all(root / "dumps/baseline/step0/rank1");
  auto hunt = AnalyzeDumpTree(TreeOptions(root), {});
  ASSERT_FALSE(hunt.ok());
  EXPECT_EQ(hunt.status().kind(), ErrorKind::kInvalidArgument);
  const std::string message = hunt.status().message();
  EXPECT_NE(message.find("step1/rank2 only in the baseline"), std::string::npos) << message;
  EXPECT_NE(message.find("step0/rank1 only in the candidate"), std::string::npos) << message;
}

// A step dumped on one side only is listed and not compared; the common steps still are.
TEST(MultiRank, AStepOnOneSideOnlyIsListedNotCompared) {
  TempDir dir;
  fs::path root = CopyDumps(dir);
  fs::remove_all(root / "dumps/candidate/step1");
  auto hunt = AnalyzeDumpTree(TreeOptions(root), {});
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const json& scan = (*hunt)["scan"];
  EXPECT_EQ(scan["pairs"], 4);
  EXPECT_EQ(scan["steps_only_in_baseline"], json::array({1}));
  EXPECT_TRUE(scan["steps_only_in_candidate"].empty());
  EXPECT_EQ(scan["first"]["rank"], 3);
  EXPECT_NE(scan["explanation"].get<std::string>().find("step1 only in the baseline: not compared"), std::string::npos)
      << scan["explanation"];
}

// One pair at a time (a budget below any pair) or two at once: the same answer, and the
// budget is kept.
TEST(MultiRank, BoundedPoolAndMemoryBudgetGiveTheSameAnswer) {
  ScanOptions one;
  one.threads = 2;
  one.memory_budget = 1;
  auto a = AnalyzeDumpTree(TreeOptions(Fixture()), one);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  uint64_t largest = 0;
  for (const json& r : (*a)["scan"]["per_rank"]) largest = std::max(largest, r["dump_bytes"].get<uint64_t>());
  EXPECT_EQ((*a)["scan"]["peak_dump_bytes_in_flight"], largest);  // never two pairs in flight
  ScanOptions two;
  two.threads = 2;
  two.memory_budget = uint64_t{1} << 30;
  auto b = AnalyzeDumpTree(TreeOptions(Fixture()), two);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)["scan"]["threads"], 2);
  EXPECT_EQ((*a)["scan"]["per_rank"], (*b)["scan"]["per_rank"]);
  EXPECT_EQ((*a)["scan"]["first"], (*b)["scan"]["first"]);
}

// The heatmap's data against the compare itself: a cell is non-zero exactly when the module's
// forward output differs in that pair's compare, and one cell's value is worked out from the
// raw statistics of dump.json.
TEST(MultiRank, HeatmapDataAgreesWithTheCompare) {
  auto hunt = AnalyzeDumpTree(TreeOptions(Fixture()), {});
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const json& heat = (*hunt)["heatmap"];
  EXPECT_EQ(heat["kind"], "module");
  ASSERT_EQ(heat["columns"].size(), 8u);
  const std::string ffn = "layers.0.feed_forward.ParallelFeedForward";
  int ffn_row = -1;
  for (size_t i = 0; i < heat["rows"].size(); ++i) {
    if (heat["rows"][i] == ffn) ffn_row = static_cast<int>(i);
  }
  ASSERT_GE(ffn_row, 0) << heat["rows"].dump();
  EXPECT_EQ(heat["rows"][0], "tok_embeddings.Embedding");  // execution order
  // Rank 3's first divergent API, at step 0, lies in the sharded feed-forward.
  EXPECT_EQ(heat["first_cell"], json({{"row", ffn_row}, {"column", 3}}));
  for (size_t c = 0; c < heat["columns"].size(); ++c) {
    const json& col = heat["columns"][c];
    const fs::path rank = "step" + std::to_string(col["step"].get<int>()) + "/rank" + std::to_string(col["rank"].get<int>());
    auto base = DumpReader().Read(Fixture() / "dumps/baseline" / rank / "dump.json");
    auto cand = DumpReader().Read(Fixture() / "dumps/candidate" / rank / "dump.json");
    ASSERT_TRUE(base.ok() && cand.ok());
    MoveToPool(*cand, base->pool);
    auto table = Compare(*cand, *base, {});
    ASSERT_TRUE(table.ok());
    std::map<std::string, bool> differs;
    for (const CompareRow& r : table->rows) {
      const Row& n = table->NpuRow(r);
      std::string name(cand->entries[n.entry].name);
      if (name.rfind("Module.", 0) != 0 || name.find(".forward.") == std::string::npos || n.state != RowState::kOutput) {
        continue;
      }
      std::string key = name.substr(7, name.rfind(".forward.") - 7);
      differs[key] = differs[key] || !table->Identical(r);
    }
    for (size_t r = 0; r < heat["rows"].size(); ++r) {
      const std::string key = heat["rows"][r];
      ASSERT_TRUE(differs.count(key)) << key;
      EXPECT_EQ(heat["values"][r][c].get<double>() > 0, differs[key]) << key << " " << rank;
    }
  }
  // step1/rank0, the feed-forward's output: Max, Min and Norm are equal, Mean differs.
  auto raw = [](const char* side) {
    std::ifstream in(Fixture() / "dumps" / side / "step1/rank0/dump.json");
    return json::parse(in)["data"]["Module.layers.0.feed_forward.ParallelFeedForward.forward.0"]["output"][0];
  };
  json b = raw("baseline"), c = raw("candidate");
  ASSERT_EQ(b["Norm"], c["Norm"]);
  ASSERT_NE(b["Mean"], c["Mean"]);
  double range = std::max({std::fabs(b["Max"].get<double>()), std::fabs(b["Min"].get<double>()),
                           std::fabs(c["Max"].get<double>()), std::fabs(c["Min"].get<double>())});
  double expected = std::fabs(c["Mean"].get<double>() - b["Mean"].get<double>()) / range;
  EXPECT_DOUBLE_EQ(heat["values"][ffn_row][4].get<double>(), expected);
}

TEST(MultiRank, ToolScansADumpTreeWithoutStepAndRank) {
  TempDir dir;
  parity::testing::FakeContext ctx(dir.path() / "numerical_report");
  auto tool = tools::MakeMsprobeFirstDiffTool();
  json args = {{"baseline_dump", (Fixture() / "dumps/baseline").string()},
               {"candidate_dump", (Fixture() / "dumps/candidate").string()},
               {"worktree", Fixture().string()},
               {"threads", 2}};
  auto result = tool.handler(args, ctx);
  ASSERT_FALSE(result.is_error) << result.content.dump();
  EXPECT_EQ(result.structured["scan"]["first"]["rank"], 3);
  EXPECT_NE(result.content.dump().find("Dump tree: step0, rank 3 diverges first"), std::string::npos)
      << result.content.dump();
  size_t compared = 0;
  for (const auto& step : ctx.progress()) compared += step.message.find("pairs)") != std::string::npos;
  EXPECT_EQ(compared, 8u);  // one progress notification per pair
  // With a step and rank: that pair alone, as before.
  args["step"] = 1;
  args["rank"] = 0;
  auto one = tool.handler(args, ctx);
  ASSERT_FALSE(one.is_error) << one.content.dump();
  EXPECT_FALSE(one.structured.contains("scan"));
  EXPECT_EQ(one.structured["first_divergence"]["api"], "Distributed.all_reduce.0.forward");
}

}  // namespace
}  // namespace parity::msprobe
