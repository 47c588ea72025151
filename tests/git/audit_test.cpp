#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/git/audit.h"
#include "domain/git/git_handle.h"
#include "domain/git/refs.h"
#include "tests/git/git_fixture.h"

namespace parity::git {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::DemoRepos;
using testing::TempDir;

std::vector<std::string> Paths(const std::vector<FileChange>& changes) {
  std::vector<std::string> out;
  for (const auto& c : changes) out.push_back(c.path);
  return out;
}

class AuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repos_ = testing::MakeDemoRepos(tmp_.path());
    auto repo = OpenRepository(repos_.work / "utils");  // any folder inside the work tree
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(repo).value();
  }
  TempDir tmp_;
  DemoRepos repos_;
  RepoPtr repo_;
};

// A token in a remote URL never reaches the audit (its result, the ledger, the report).
TEST_F(AuditTest, RemoteUrlsLoseTheirCredentials) {
  git_remote* raw = nullptr;
  ASSERT_EQ(git_remote_create(&raw, repo_.get(), "tokened", "https://alice:ghp_SECRET@example.invalid/org/r.git"), 0);
  git_remote_free(raw);
  ASSERT_EQ(git_remote_set_pushurl(repo_.get(), "tokened", "https://ghp_PUSHSECRET@example.invalid/org/r.git"), 0);
  auto audit = AuditWorkspace(repo_.get(), AuditOptions{});
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  bool found = false;
  for (const auto& r : audit->remotes) {
    if (r.name != "tokened") continue;
    found = true;
    EXPECT_EQ(r.url, "https://alice@example.invalid/org/r.git");
    EXPECT_EQ(r.push_url.value_or(""), "https://example.invalid/org/r.git");
  }
  EXPECT_TRUE(found);
}

TEST_F(AuditTest, ReportsRemotesHeadWorkingStateAndStash) {
  auto audit = AuditWorkspace(repo_.get(), AuditOptions{});
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_EQ(audit->repo_root, repos_.work);

  ASSERT_EQ(audit->remotes.size(), 2u);
  EXPECT_EQ(audit->remotes[0].name, "cann");
  EXPECT_EQ(audit->remotes[0].url, repos_.cann_bare.string());
  EXPECT_EQ(audit->remotes[1].name, "origin");
  EXPECT_EQ(audit->remotes[1].url, repos_.origin_bare.string());

  ASSERT_TRUE(audit->head.branch);
  EXPECT_EQ(*audit->head.branch, "feature");
  EXPECT_FALSE(audit->head.detached);
  EXPECT_EQ(audit->head.commit->commit, repos_.feature_tip);
  EXPECT_EQ(audit->head.commit->summary, "candidate: refactor forward");
  ASSERT_TRUE(audit->head.upstream);
  EXPECT_EQ(*audit->head.upstream, "origin/master");
  EXPECT_EQ(audit->head.ahead, 1u);
  EXPECT_EQ(audit->head.behind, 0u);

  EXPECT_THAT(Paths(audit->state.staged), ElementsAre("train_configs/toy.toml"));
  EXPECT_THAT(Paths(audit->state.unstaged), ElementsAre("model.py", "scripts/run_train.sh"));
  EXPECT_THAT(audit->state.untracked, ElementsAre("notes.txt", "train_configs/debug.toml", "utils/helper.py"));
  EXPECT_FALSE(audit->state.clean());

  ASSERT_EQ(audit->stash.size(), 1u);
  EXPECT_EQ(audit->stash[0].index, 0u);
  EXPECT_THAT(audit->stash[0].message, HasSubstr("wip readme"));
  EXPECT_EQ(audit->stash[0].commit, testing::Git(repos_.work, {"rev-parse", "stash@{0}"}));

  EXPECT_TRUE(audit->last_fetch.has_value());
  ASSERT_EQ(audit->worktrees.size(), 0u);
}

TEST_F(AuditTest, StaleForkCheckShowsHowMasterDivergesAcrossRemotes) {
  auto audit = AuditWorkspace(repo_.get(), AuditOptions{});
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  ASSERT_EQ(audit->branches_across_remotes.size(), 1u);  // no "main" anywhere
  const auto& master = audit->branches_across_remotes[0];
  EXPECT_EQ(master.branch, "master");
  EXPECT_TRUE(master.diverged);
  std::vector<std::string> refs;
  for (const auto& r : master.refs) refs.push_back(r.ref + "=" + r.commit);
  EXPECT_THAT(refs, ElementsAre("master=" + repos_.origin_tip, "cann/master=" + repos_.cann_tip,
                                "origin/master=" + repos_.origin_tip));
  // master and origin/master agree, so the pairs are each of them against cann/master.
  ASSERT_EQ(master.pairs.size(), 2u);
  for (const auto& p : master.pairs) {
    EXPECT_EQ(p.a_only, 1u) << p.a << " vs " << p.b;
    EXPECT_EQ(p.b_only, 1u) << p.a << " vs " << p.b;
    ASSERT_TRUE(p.merge_base);
    EXPECT_EQ(*p.merge_base, repos_.base);
  }
  // The origin commit was made after the cann one (fixed, increasing dates).
  EXPECT_EQ(master.newest, "master");
}

TEST_F(AuditTest, AmbiguousBaselineIsRefusedWithEveryCandidate) {
  auto r = ResolveBaseline(repo_.get(), "master");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("ambiguous"));
  EXPECT_THAT(r.status().message(), HasSubstr("cann/master"));
  EXPECT_THAT(r.status().message(), HasSubstr("origin/master"));
  ASSERT_FALSE(r.status().evidence().empty());
  EXPECT_THAT(r.status().evidence()[0].value, HasSubstr(repos_.cann_tip.substr(0, 12)));

  auto cann = ResolveBaseline(repo_.get(), "cann/master");
  ASSERT_TRUE(cann.ok()) << cann.status().ToString();
  EXPECT_EQ(cann->commit, repos_.cann_tip);
  auto full = ResolveBaseline(repo_.get(), "refs/remotes/origin/master");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->commit, repos_.origin_tip);
  auto sha = ResolveBaseline(repo_.get(), repos_.base.substr(0, 10));
  ASSERT_TRUE(sha.ok());
  EXPECT_EQ(sha->commit, repos_.base);
}

TEST_F(AuditTest, BranchOnOneRemoteOnlyIsNotAmbiguous) {
  auto r = ResolveBaseline(repo_.get(), "feature");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->commit, repos_.feature_tip);
}

TEST_F(AuditTest, HeadIsNeverTakenForABranchCarriedByRemotes) {
  testing::Git(repos_.work, {"remote", "set-head", "cann", "master"});  // cann/HEAD -> cann/master
  auto r = ResolveBaseline(repo_.get(), "HEAD");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->commit, repos_.feature_tip);
}

TEST_F(AuditTest, UnknownRevisionIsNotFound) {
  auto r = ResolveCommit(repo_.get(), "no-such-branch");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("no-such-branch"));
  EXPECT_FALSE(r.status().hint().empty());
}

TEST(AuditErrors, NotARepository) {
  TempDir tmp;
  auto r = OpenRepository(tmp.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("is not inside a git repository"));
  EXPECT_FALSE(r.status().hint().empty());

  auto missing = OpenRepository(tmp.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("does not exist"));
}

TEST(AuditErrors, AuditDoesNotWriteTheIndexOrAnythingElse) {
  TempDir tmp;
  auto repos = testing::MakeDemoRepos(tmp.path());
  // Make the index stat data stale, the case where `git status` would rewrite the index.
  testing::WriteFile(repos.work / "README.md", "toy project\n");
  auto before = testing::Fingerprint(repos.work);
  auto repo = OpenRepository(repos.work);
  ASSERT_TRUE(repo.ok());
  ASSERT_TRUE(AuditWorkspace(repo->get(), AuditOptions{}).ok());
  EXPECT_EQ(testing::FingerprintDiff(before, testing::Fingerprint(repos.work)), "");
}

}  // namespace
}  // namespace parity::git
