// The search of `parity bisect` (domain/workflow/bisect_search.h) against histories whose
// answer is decided by hand: which commits it probes, in which order, how many, and what
// the probes prove. The trainings are replaced by an oracle over the planted verdicts; the
// real trainings are bisect_e2e.py's.
#include "domain/workflow/bisect_search.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "domain/workflow/bisect.h"
#include "tests/common/git_cli.h"
#include "tests/common/temp_dir.h"

namespace parity::workflow {
namespace {

using Kind = BisectAnswer::Kind;

// Commits 1..n: kDiffers from `first_bad` on, kSkip for those in `skips`.
struct Oracle {
  size_t first_bad;  // n + 1: nothing changes
  std::vector<size_t> skips;
  std::vector<size_t> asked;
  ProbeVerdict operator()(size_t i) {
    asked.push_back(i);
    for (size_t s : skips) {
      if (s == i) return ProbeVerdict::kSkip;
    }
    return i >= first_bad ? ProbeVerdict::kDiffers : ProbeVerdict::kSame;
  }
};

BisectAnswer RunSearch(size_t n, Oracle& oracle, size_t k = 1, std::vector<std::vector<size_t>>* rounds = nullptr) {
  BisectSearch s(n);
  while (!s.Done()) {
    std::vector<size_t> next = s.Next(k);
    if (rounds) rounds->push_back(next);
    for (size_t i : next) s.Record(i, oracle(i));
  }
  return s.Answer();
}

size_t CeilLog2(size_t n) {
  size_t k = 0;
  while ((size_t{1} << k) < n) ++k;
  return k;
}

TEST(BisectSearch, TheDemoHistoryCulpritEightSkipSix) {
  // make-demo-repo's bisect/history: 13 commits, 6 does not run, 8 changes the numbers.
  // By hand: 6 (skip), then its neighbour 7 (same), 10 (differs), 8 (differs): culprit 8.
  Oracle o{8, {6}};
  BisectAnswer a = RunSearch(13, o);
  EXPECT_EQ(a.kind, Kind::kFound);
  EXPECT_EQ(a.hi, 8u);
  EXPECT_EQ(a.lo, 7u);
  EXPECT_EQ(o.asked, (std::vector<size_t>{6, 7, 10, 8}));
  EXPECT_LE(o.asked.size(), CeilLog2(13) + 1);
}

TEST(BisectSearch, EveryCulpritPositionWithinCeilLog2Probes) {
  for (size_t n : {1u, 2u, 3u, 7u, 12u, 13u, 16u, 100u}) {
    for (size_t bad = 1; bad <= n; ++bad) {
      Oracle o{bad, {}};
      BisectAnswer a = RunSearch(n, o);
      ASSERT_EQ(a.kind, Kind::kFound) << "n=" << n << " bad=" << bad;
      EXPECT_EQ(a.hi, bad);
      EXPECT_EQ(a.lo, bad - 1);
      // The bad commit itself is trained only when every commit before it matched.
      EXPECT_LE(o.asked.size(), CeilLog2(n) + (bad == n ? 1 : 0)) << "n=" << n << " bad=" << bad;
      for (size_t i : o.asked) EXPECT_TRUE(i >= 1 && i <= n);
    }
  }
}

TEST(BisectSearch, NothingChangesSaysSoAfterProbingTheBadCommit) {
  Oracle o{8, {6}};  // the demo's history up to commit 7: the break and its fix, no change
  BisectAnswer a = RunSearch(7, o);
  EXPECT_EQ(a.kind, Kind::kNoChange);
  EXPECT_EQ(o.asked, (std::vector<size_t>{3, 5, 6, 7}));
  EXPECT_EQ(o.asked.back(), 7u);
}

TEST(BisectSearch, CulpritNextToSkippedCommitsIsASkippedRange) {
  // 5 and 6 do not run and 6 is the real culprit: the probes prove 4 matches and 7
  // differs, so the answer is "one of 5, 6, 7", never a guess.
  Oracle o{6, {5, 6}};
  BisectAnswer a = RunSearch(10, o);
  EXPECT_EQ(a.kind, Kind::kSkippedRange);
  EXPECT_EQ(a.lo, 4u);
  EXPECT_EQ(a.hi, 7u);
  EXPECT_EQ(a.skipped, (std::vector<size_t>{5, 6}));
}

TEST(BisectSearch, BadCommitThatDoesNotRunIsUnknown) {
  Oracle o{11, {10}};  // nothing before 10 changes, and 10 (the bad one) does not run
  BisectAnswer a = RunSearch(10, o);
  EXPECT_EQ(a.kind, Kind::kUnknown);
  EXPECT_EQ(a.lo, 9u);
  EXPECT_EQ(a.skipped, (std::vector<size_t>{10}));
}

TEST(BisectSearch, ParallelProbesSplitTheRangeInKPlusOneParts) {
  // k = 2 on the demo history: 4 and 8 first (thirds of 1..13), then 5 and 6, then 7.
  Oracle o{8, {6}};
  std::vector<std::vector<size_t>> rounds;
  BisectAnswer a = RunSearch(13, o, 2, &rounds);
  EXPECT_EQ(a.kind, Kind::kFound);
  EXPECT_EQ(a.hi, 8u);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0], (std::vector<size_t>{4, 8}));
  EXPECT_EQ(rounds[1], (std::vector<size_t>{5, 6}));
  EXPECT_EQ(rounds[2], (std::vector<size_t>{7}));
  // Fewer rounds than the serial search's 4 probes: what k runners buy.
  for (size_t n : {13u, 40u, 100u}) {
    for (size_t bad = 1; bad < n; ++bad) {
      Oracle serial{bad, {}}, wide{bad, {}};
      std::vector<std::vector<size_t>> r1, r3;
      EXPECT_EQ(RunSearch(n, serial, 1, &r1).hi, bad);
      EXPECT_EQ(RunSearch(n, wide, 3, &r3).hi, bad);
      EXPECT_LE(r3.size(), r1.size()) << "n=" << n << " bad=" << bad;
    }
  }
}

TEST(BisectSearch, ProgressFiguresShrinkWithEachProbe) {
  BisectSearch s(13);
  EXPECT_EQ(s.CandidatesLeft(), 13u);
  EXPECT_EQ(s.ProbesLeftEstimate(), 4u);
  s.Record(7, ProbeVerdict::kSame);
  EXPECT_EQ(s.CandidatesLeft(), 6u);
  EXPECT_EQ(s.ProbesLeftEstimate(), 3u);
  s.Record(10, ProbeVerdict::kDiffers);
  EXPECT_EQ(s.CandidatesLeft(), 3u);
  s.Record(8, ProbeVerdict::kDiffers);
  EXPECT_TRUE(s.Done());
  EXPECT_EQ(s.ProbesLeftEstimate(), 0u);
}

TEST(BisectSearch, ARestoredChangeIsNamedNotHidden) {
  // With two probes at once, 4 differs and 8 matches again (a later commit reverted it).
  BisectSearch s(12);
  s.Record(4, ProbeVerdict::kDiffers);
  s.Record(8, ProbeVerdict::kSame);
  for (size_t i : s.Next(1)) EXPECT_LT(i, 4u);  // the search stays before the oldest difference
  auto pairs = s.NonMonotonic();
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], (std::pair<size_t, size_t>{4, 8}));
}

// The pipeline's refusals and stops over a scripted StepRunner (every call recorded) on a
// real git repository: what is refused before anything runs, and what stops the bisect
// instead of being taken for a commit that does not run.
class ScriptedRunner : public StepRunner {
 public:
  std::vector<std::string> calls;  // "tool action"
  nlohmann::json uncommitted = nlohmann::json::array();
  bool refuse_wait = false;
  Result<nlohmann::json> Call(const std::string& tool, const nlohmann::json& a) override {
    std::string action = a.value("action", a.value("phase", ""));
    calls.push_back(tool + " " + action);
    if (tool == "audit_workspace" && action == "diff") return nlohmann::json{{"diff", {{"files", uncommitted}}}};
    if (tool == "audit_workspace" && action == "prepare") {
      return nlohmann::json{{"prepare", {{"baseline_worktree", {{"path", a["baseline_path"]}}},
                                         {"candidate_worktree", {{"path", a["candidate_path"]}}}}}};
    }
    if (tool == "audit_workspace") return nlohmann::json{{"cleanup", {{"removed", a["paths"]}}}};
    if (tool == "probe_env") return nlohmann::json{{"anomalies", nlohmann::json::array()}};
    if (tool == "parse_log") return nlohmann::json{{"files", {{{"path", a["paths"][0]}, {"errors_total", 0}}}}};
    if (tool == "run_training" && action == "wait") {
      if (refuse_wait) return FailedPrecondition("refused by the user's policy: the training command is not allowed");
      return nlohmann::json{{"job", {{"id", a["job_id"]}, {"status", "ok"}, {"log_path", "/nonexistent/probe.log"}}}};
    }
    if (tool == "run_training") {
      return nlohmann::json{{"job", {{"id", "job-" + std::to_string(calls.size())}, {"status", "running"},
                                     {"log_path", "/nonexistent/good.log"}, {"checkpoint", "/nonexistent/ckpt"}}}};
    }
    return Internal("unexpected tool " + tool);
  }
};

class Quiet : public PipelineObserver {
 public:
  void Step(size_t, size_t, std::string_view) override {}
  void Note(std::string_view) override {}
};

struct Repo {
  testing_support::TempDir dir{"parity-bisect"};
  std::filesystem::path path = dir.path() / "repo";
  Repo() {
    std::filesystem::create_directories(path);
    testing_support::Git(path, {"init", "-q", "-b", "main"});
    for (int i = 0; i < 4; ++i) {
      testing_support::WriteFile(path / "f.txt", std::to_string(i) + "\n");
      testing_support::Git(path, {"add", "-A"});
      testing_support::Git(path, {"commit", "-q", "-m", "c" + std::to_string(i)});
    }
    testing_support::Git(path, {"checkout", "-q", "-b", "side", "HEAD~2"});
    testing_support::WriteFile(path / "g.txt", "side\n");
    testing_support::Git(path, {"add", "-A"});
    testing_support::Git(path, {"commit", "-q", "-m", "side"});
    testing_support::Git(path, {"checkout", "-q", "main"});
  }
  PremergeConfig Config() const {
    PremergeConfig c;
    c.repo = path;
    c.report_dir = dir.path() / "report";
    c.baseline = "main~3";
    c.candidate = "main";
    c.configs = {{"toy_small", {}}};
    c.tensorboard = false;
    return c;
  }
};

TEST(BisectPipeline, AGoodCommitThatIsNotAnAncestorIsRefusedBeforeAnyTool) {
  Repo repo;
  ScriptedRunner runner;
  Quiet quiet;
  BisectOptions o;
  o.good = "side";
  auto out = RunBisect(repo.Config(), o, runner, quiet);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("is not an ancestor"), std::string::npos) << out.status().ToString();
  EXPECT_TRUE(runner.calls.empty());
  EXPECT_EQ(BisectExitCode(out), 2);
}

TEST(BisectPipeline, UnconfirmedUncommittedFilesStopBeforeAnythingIsCreated) {
  Repo repo;
  ScriptedRunner runner;
  runner.uncommitted = {{{"path", "scripts/run.sh"}, {"origin", "uncommitted"}, {"proposed", "B"},
                         {"reason", "launcher"}, {"allowed", {"B", "C", "ignore"}}}};
  Quiet quiet;
  auto out = RunBisect(repo.Config(), BisectOptions{}, runner, quiet);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(out.status().ToString().find("scripts/run.sh"), std::string::npos) << out.status().ToString();
  EXPECT_EQ(runner.calls, (std::vector<std::string>{"audit_workspace diff"}));
}

TEST(BisectPipeline, ARefusedTrainingStopsTheBisectAndIsNotASkip) {
  Repo repo;
  ScriptedRunner runner;
  runner.refuse_wait = true;
  Quiet quiet;
  auto out = RunBisect(repo.Config(), BisectOptions{}, runner, quiet);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("refused by the user's policy"), std::string::npos) << out.status().ToString();
  // The probe's worktrees are removed on the way out; nothing was judged.
  ASSERT_FALSE(runner.calls.empty());
  EXPECT_EQ(runner.calls.back(), "audit_workspace cleanup");
  EXPECT_FALSE(std::filesystem::exists(repo.dir.path() / "report" / "bisect.json"));
}

}  // namespace
}  // namespace parity::workflow
