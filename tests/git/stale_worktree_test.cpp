// parity's worktrees of an earlier run that stand where a new prepare goes: found by
// parity's mark (never a folder or worktree parity did not make), listed with the exact
// removal command when their removal is not confirmed, removed first when it is (with the
// changes they held discarded and recorded), and left alone while the parity process that
// made them still runs.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/git/classify.h"
#include "domain/git/git_handle.h"
#include "domain/git/prepare.h"
#include "domain/git/worktrees.h"
#include "domain/ledger/ledger.h"
#include "tests/git/git_fixture.h"
#include "tests/git/worktree_fixture.h"

namespace parity::git {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using testing::TempDir;

class StaleWorktreeTest : public testing::WorktreeFixture {
 protected:
  // An earlier run that ended without cleaning up (a crash, a kill -9, an older parity).
  void EarlierRun() {
    auto earlier = PrepareWorktrees(repo_.get(), Request());
    ASSERT_TRUE(earlier.ok()) << earlier.status().ToString();
  }
  // Makes the marks say another process made the worktrees.
  void MarkMadeBy(int pid, const std::string& start_time) {
    for (const char* name : {"proj-baseline", "proj-candidate"}) {
      fs::path mark = repos_.work / ".git/worktrees" / name / "parity.json";
      std::ifstream in(mark);
      json j = json::parse(in);
      in.close();
      j["process"] = {{"pid", pid}, {"start_time", start_time}};
      std::ofstream(mark, std::ios::trunc) << j.dump(2);
    }
  }
  std::string EvidenceOf(const Status& s, const std::string& name) {
    for (const auto& e : s.evidence()) if (e.name == name) return e.value;
    return "";
  }
};

TEST_F(StaleWorktreeTest, TheMarkNamesTheProcessThatMadeTheWorktree) {
  EarlierRun();
  auto listed = ListWorktrees(repo_.get());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  for (const auto& w : *listed) {
    EXPECT_TRUE(w.parity_owned);
    EXPECT_EQ(w.creator_pid, ::getpid());
    EXPECT_TRUE(w.creator_running) << "this very process made it";
    ASSERT_TRUE(w.created_at);
    EXPECT_EQ(w.created_at->size(), 20u) << *w.created_at;  // 2026-12-01T21:00:00Z
  }
  MarkMadeBy(::getpid(), "1");  // the same pid, another start time: a reused pid
  auto again = ListWorktrees(repo_.get());
  ASSERT_TRUE(again.ok());
  for (const auto& w : *again) EXPECT_FALSE(w.creator_running);
}

TEST_F(StaleWorktreeTest, UnconfirmedStaleWorktreesAreListedWithTheRemovalCommand) {
  EarlierRun();
  testing::WriteFile(Candidate() / "outputs/loss.log", "step 1 loss 2.0\n");  // the earlier run's output
  MarkMadeBy(999999, "123");
  auto again = PrepareWorktrees(repo_.get(), Request());
  ASSERT_FALSE(again.ok());
  const Status& s = again.status();
  EXPECT_EQ(s.kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("earlier run"));
  EXPECT_THAT(s.message(), HasSubstr(Baseline().string() + " (baseline at " + repos_.origin_tip.substr(0, 12)));
  EXPECT_THAT(s.message(), HasSubstr("by process 999999, no longer running"));
  EXPECT_THAT(s.message(), HasSubstr("1 changed file(s) that removing it discards"));
  EXPECT_THAT(s.message(), HasSubstr("nothing was removed or created"));
  // The command removes exactly these two, by parity's cleanup (which checks the mark).
  EXPECT_THAT(s.hint(), HasSubstr("parity call audit_workspace '{\"action\":\"cleanup\",\"force\":true,\"paths\":[\"" +
                                  Baseline().string() + "\",\"" + Candidate().string() + "\"]"));
  json listed = json::parse(EvidenceOf(s, "stale_worktrees"));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1]["changes"], json({"outputs/loss.log"}));
  EXPECT_TRUE(fs::exists(Candidate() / "outputs/loss.log")) << "nothing removed without consent";
}

TEST_F(StaleWorktreeTest, ConfirmedStaleWorktreesAreRemovedFirstAndRecorded) {
  EarlierRun();
  testing::WriteFile(Candidate() / "outputs/loss.log", "step 1 loss 2.0\n");
  MarkMadeBy(999999, "123");
  size_t entries_before = (*ledger::Read(report_))["entries"].size();
  PrepareRequest req = Request();
  req.remove_stale = true;
  auto again = PrepareWorktrees(repo_.get(), req);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ(again->removed_stale.size(), 2u);
  EXPECT_EQ(again->removed_stale[1].discarded, (std::vector<std::string>{"outputs/loss.log"}));
  EXPECT_FALSE(fs::exists(Candidate() / "outputs/loss.log"));
  EXPECT_TRUE(fs::exists(Candidate() / "scripts/run_train.sh")) << "the new worktree is there";
  auto listed = ListWorktrees(repo_.get());
  ASSERT_EQ(listed->size(), 2u);
  for (const auto& w : *listed) EXPECT_EQ(w.creator_pid, ::getpid());
  json entries = (*ledger::Read(report_))["entries"];
  ASSERT_GT(entries.size(), entries_before + 2);
  EXPECT_EQ(entries[entries_before]["action"], "cleanup");
  EXPECT_EQ(entries[entries_before]["inputs"]["force"], true);
}

TEST_F(StaleWorktreeTest, AStaleRegistrationWhoseFolderIsGoneIsInTheWayToo) {
  EarlierRun();
  fs::remove_all(Baseline());  // the folder deleted by hand; git still lists the worktree
  auto again = PrepareWorktrees(repo_.get(), Request());
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("its folder is gone"));
  PrepareRequest req = Request();
  req.remove_stale = true;
  auto confirmed = PrepareWorktrees(repo_.get(), req);
  ASSERT_TRUE(confirmed.ok()) << confirmed.status().ToString();
  EXPECT_TRUE(fs::exists(Baseline() / "scripts/run_train.sh"));
}

TEST_F(StaleWorktreeTest, WorktreesOfARunningParityAreNotRemoved) {
  EarlierRun();
  // Another process still alive: its pid and start time are what the mark records.
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  std::string start;
  for (int i = 0; i < 200 && start.empty(); ++i) {
    std::ifstream in("/proc/" + std::to_string(child) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    std::istringstream fields(stat.substr(stat.rfind(')') + 1));
    std::string f;
    for (int k = 3; k <= 22 && fields >> f; ++k) if (k == 22) start = f;
  }
  MarkMadeBy(child, start);
  PrepareRequest req = Request();
  req.remove_stale = true;
  auto again = PrepareWorktrees(repo_.get(), req);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("which is still running"));
  EXPECT_THAT(again.status().hint(), HasSubstr("parity call audit_workspace"));
  EXPECT_TRUE(fs::exists(Baseline() / "scripts/run_train.sh"));
}

TEST_F(StaleWorktreeTest, WhatParityDidNotMakeIsNeverRemoved) {
  // A worktree the user made at the path parity wants.
  testing::Git(repos_.work, {"worktree", "add", "-q", "--detach", Baseline().string(), "HEAD"});
  PrepareRequest req = Request();
  req.remove_stale = true;
  auto refused = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("which parity did not make; parity never removes it"));
  EXPECT_TRUE(fs::exists(Baseline() / ".git"));
  testing::Git(repos_.work, {"worktree", "remove", "--force", Baseline().string()});

  // A plain folder, and a worktree of another repository, at the path.
  fs::create_directories(Baseline());
  testing::WriteFile(Baseline() / "mine.txt", "keep me\n");
  refused = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("already exists and is not a worktree parity made"));
  EXPECT_EQ(testing::ReadFile(Baseline() / "mine.txt"), "keep me\n");
  EXPECT_FALSE(fs::exists(Candidate()));
  EXPECT_TRUE(ListWorktrees(repo_.get())->empty());
}

}  // namespace
}  // namespace parity::git
