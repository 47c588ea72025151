// A run read from a log per rank (tests/logs/corpus/per_rank_*: the pipeline-parallel run of
// the corpus, PP 2 x DP 2, written as srun --output=train_%t.log and as torchrun --log-dir
// leave it). The expected results follow from the generator's values: ranks 0-1 print the
// placeholder loss -1.0, ranks 2-3 the loss; candidate_moved moves ranks 2-3 by 0.01 from
// step 10; candidate_placeholder prints -2.0 on ranks 0-1.
#include <gtest/gtest.h>

#include "domain/logs/compare.h"
#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"
#include "domain/logs/rank_files.h"
#include "tests/logs/test_util.h"

namespace parity::logs {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;

std::string Corpus(const std::string& name) {
  return (fs::path(PARITY_LOGS_FIXTURES).parent_path() / "corpus" / name).string();
}

Result<ParseResult> ReadRun(const std::string& pattern, std::optional<int> rank = std::nullopt,
                            std::vector<std::string> metrics = {"loss", "grad_norm"}) {
  PARITY_ASSIGN_OR_RETURN(std::vector<fs::path> paths, ExpandLogPaths({pattern}));
  std::vector<ParseResult> files;
  ParseOptions options;
  options.metrics = std::move(metrics);
  options.sha256 = true;
  for (const auto& p : paths) {
    PARITY_ASSIGN_OR_RETURN(ParseResult r, ParseLog(p, options));
    files.push_back(std::move(r));
  }
  return MergeRankLogs(std::move(files), pattern, rank);
}

Result<RunComparison> CompareFolders(const std::string& baseline, const std::string& candidate) {
  CriteriaRequest request;
  request.metrics = {"loss", "grad_norm"};
  request.tolerance = Tolerance{1e-3, std::nullopt};  // grad_norm is printed %7.4f: 1e-5 is undecidable
  PARITY_ASSIGN_OR_RETURN(Criteria criteria, BuildCriteria(request));
  PARITY_ASSIGN_OR_RETURN(ParseResult b, ReadRun(baseline));
  PARITY_ASSIGN_OR_RETURN(ParseResult c, ReadRun(candidate));
  return CompareRuns(b, c, criteria, "", false);
}

TEST(RankFiles, RankFromThePathsUsersHave) {
  EXPECT_EQ(RankFromPath("logs/train_3.log"), 3);
  EXPECT_EQ(RankFromPath("logs/rank_12.log.gz"), 12);
  EXPECT_EQ(RankFromPath("logs/node1_rank5.out"), 5);       // the rank word wins over the node
  EXPECT_EQ(RankFromPath("logs/Rank-7-of-8.txt"), 7);
  EXPECT_EQ(RankFromPath("L/none_k2x7q9ab/attempt_0/2/stdout.log"), 2);  // torchrun --log-dir
  EXPECT_EQ(RankFromPath("logs/train.log"), std::nullopt);
}

TEST(RankFiles, SrunFolderIsOneRunOfFourRanksWithTheLastStagesAsItsSeries) {
  auto run = ReadRun(Corpus("per_rank_srun/baseline"));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->rank, 2);  // ranks 0-1 print the placeholder
  EXPECT_EQ(run->ranks_seen, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(run->other_ranks.size(), 3u);
  ASSERT_EQ(run->sources.size(), 4u);
  EXPECT_EQ(run->sources[3].ranks, std::vector<int>{3});
  EXPECT_EQ(run->sha256.size(), 64u);
  EXPECT_TRUE(run->success_marker);
  EXPECT_EQ(*run->steps.first, 1);
  EXPECT_EQ(*run->steps.last, 20);
  const MetricResult* loss = run->Find("loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_FALSE(loss->placeholder);
  EXPECT_DOUBLE_EQ(loss->series.values.front(), 10.63464);
  for (const auto& other : run->other_ranks) {
    const MetricResult* m = other.Find("loss");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->placeholder, other.rank < 2) << other.rank;
  }
  bool warned = false;
  for (const auto& w : run->warnings) warned = warned || w.code == "placeholder_series";
  EXPECT_TRUE(warned);
}

TEST(RankFiles, MovedLastStageFailsAtStepTenAndTheChangedPlaceholderPasses) {
  auto moved = CompareFolders(Corpus("per_rank_srun/baseline"), Corpus("per_rank_srun/candidate_moved"));
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->verdict, Verdict::kFail) << moved->reason;
  const MetricComparison& loss = moved->metrics.front();
  EXPECT_EQ(loss.metric, "loss");
  EXPECT_EQ(loss.first_exceeding_step, 10);
  EXPECT_EQ(loss.exceeding_count, 11);
  ASSERT_EQ(loss.per_rank.size(), 4u);
  for (const auto& r : loss.per_rank) {
    EXPECT_EQ(r.placeholder, r.rank < 2) << r.rank;
    if (!r.placeholder) EXPECT_EQ(r.verdict, Verdict::kFail) << r.rank;
  }
  auto placeholder = CompareFolders(Corpus("per_rank_srun/baseline"), Corpus("per_rank_srun/candidate_placeholder"));
  ASSERT_TRUE(placeholder.ok()) << placeholder.status().ToString();
  EXPECT_EQ(placeholder->verdict, Verdict::kPass) << placeholder->reason;
  auto same = CompareFolders(Corpus("per_rank_srun/baseline"), Corpus("per_rank_srun/baseline"));
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->verdict, Verdict::kPass) << same->reason;
}

TEST(RankFiles, TorchrunLogDirRanksComeFromTheirFolders) {
  // The four rank folders hold stdout.log (the metrics) and stderr.log (a warning, no metric).
  const std::string baseline = Corpus("per_rank_torchrun/baseline/*/attempt_0/*");
  auto run = ReadRun(baseline);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->sources.size(), 8u);
  EXPECT_EQ(run->rank, 2);
  EXPECT_EQ(run->ranks_seen, (std::vector<int>{0, 1, 2, 3}));
  auto moved = CompareFolders(baseline, Corpus("per_rank_torchrun/candidate_moved/*/attempt_0/*/stdout.log"));
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->verdict, Verdict::kFail) << moved->reason;
  EXPECT_EQ(moved->metrics.front().first_exceeding_step, 10);
}

TEST(RankFiles, AnAskedRankIsTheResultsAndAnAbsentOneIsAnError) {
  auto three = ReadRun(Corpus("per_rank_srun/baseline"), 3);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ(three->rank, 3);
  auto nine = ReadRun(Corpus("per_rank_srun/baseline"), 9);
  ASSERT_FALSE(nine.ok());
  EXPECT_NE(nine.status().message().find("rank 9"), std::string::npos) << nine.status().ToString();
  EXPECT_NE(nine.status().message().find("0, 1, 2, 3"), std::string::npos) << nine.status().ToString();
}

TEST(RankFiles, AFileWithoutARankOrTwoFilesOfOneRankAreErrorsNamingThem) {
  const std::string line =
      "[titan] 2026-05-18 16:04:21,338 - root - INFO - step:  1  loss: 10.63464  grad_norm:  5.1217\n";
  ScratchDir dir;
  dir.Write("a/train_0.log", line);
  dir.Write("a/train.log", line);
  auto unnamed = ReadRun((dir.path() / "a").string());
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.status().message().find("train.log"), std::string::npos) << unnamed.status().ToString();
  EXPECT_NE(unnamed.status().message().find("which rank"), std::string::npos) << unnamed.status().ToString();

  dir.Write("b/node0_rank1.log", line);
  dir.Write("b/node1_rank1.log", line);
  auto twice = ReadRun((dir.path() / "b").string());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("node0_rank1.log"), std::string::npos) << twice.status().ToString();
  EXPECT_NE(twice.status().message().find("node1_rank1.log"), std::string::npos) << twice.status().ToString();

  // A file with no metric lines needs no rank (a launcher's own log beside the ranks').
  dir.Write("c/train_0.log", line);
  dir.Write("c/launcher.log", "srun: job 42 queued and waiting for resources\n");
  auto with_launcher = ReadRun((dir.path() / "c").string());
  ASSERT_TRUE(with_launcher.ok()) << with_launcher.status().ToString();
  EXPECT_EQ(with_launcher->rank, 0);
}

TEST(RankFiles, InterleavedFilesKeepTheirOwnRanks) {
  // Two nodes' tee'd logs, each with its ranks' prefixes: the prefixes decide, not the names.
  ScratchDir dir;
  dir.Write("n/node_0.log",
            "[rank0]:[titan] 2026-05-18 16:04:21,338 - root - INFO - step:  1  loss: 10.63464  grad_norm:  5.1217\n"
            "[rank1]:[titan] 2026-05-18 16:04:21,338 - root - INFO - step:  1  loss: 10.63464  grad_norm:  5.1217\n");
  dir.Write("n/node_1.log",
            "[rank2]:[titan] 2026-05-18 16:04:21,338 - root - INFO - step:  1  loss: 10.63464  grad_norm:  5.1217\n"
            "[rank3]:[titan] 2026-05-18 16:04:21,338 - root - INFO - step:  1  loss: 10.63465  grad_norm:  5.1217\n");
  auto run = ReadRun((dir.path() / "n").string());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->ranks_seen, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(run->sources[1].ranks, (std::vector<int>{2, 3}));
}

}  // namespace
}  // namespace parity::logs
