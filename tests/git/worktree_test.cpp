#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/git/classify.h"
#include "domain/git/git_handle.h"
#include "domain/git/prepare.h"
#include "domain/git/worktrees.h"
#include "domain/ledger/ledger.h"
#include "support/subprocess.h"
#include "tests/git/git_fixture.h"
#include "tests/git/worktree_fixture.h"

namespace parity::git {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::DemoRepos;
using testing::TempDir;

class WorktreeTest : public testing::WorktreeFixture {};

TEST_F(WorktreeTest, PrepareThenCleanupLeavesTheUserRepositoryBitForBitUnchanged) {
  auto before = testing::Fingerprint(repos_.work);

  auto prepared = PrepareWorktrees(repo_.get(), Request());
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_EQ(prepared->baseline.path, Baseline());
  EXPECT_EQ(prepared->candidate.path, Candidate());

  // Visible to the git command line, detached at the chosen commits.
  std::string list = testing::Git(repos_.work, {"worktree", "list", "--porcelain"});
  EXPECT_THAT(list, HasSubstr("worktree " + Baseline().string() + "\nHEAD " + repos_.origin_tip + "\ndetached"));
  EXPECT_THAT(list, HasSubstr("worktree " + Candidate().string() + "\nHEAD " + repos_.feature_tip + "\ndetached"));
  EXPECT_EQ(testing::Git(Baseline(), {"rev-parse", "HEAD"}), repos_.origin_tip);
  EXPECT_EQ(testing::Git(repos_.work, {"branch", "--list", "parity/*"}), "");

  // Class B in both worktrees, byte for byte, executable bit kept; class C in the candidate only.
  for (const fs::path& wt : {Baseline(), Candidate()}) {
    for (const char* f : {"scripts/run_train.sh", "train_configs/toy.toml", "train_configs/debug.toml"}) {
      EXPECT_EQ(testing::ReadFile(wt / f), testing::ReadFile(repos_.work / f)) << wt / f;
    }
    EXPECT_TRUE(testing::IsExecutable(wt / "scripts/run_train.sh"));
    EXPECT_FALSE(testing::IsExecutable(wt / "train_configs/toy.toml"));
    EXPECT_FALSE(fs::exists(wt / "notes.txt"));
  }
  EXPECT_EQ(testing::ReadFile(Candidate() / "model.py"), testing::ReadFile(repos_.work / "model.py"));
  EXPECT_EQ(testing::ReadFile(Baseline() / "model.py"), "import torch\n\ndef forward(x):\n    return x * 2 + 1\n");
  EXPECT_TRUE(fs::exists(Candidate() / "utils/helper.py"));
  EXPECT_FALSE(fs::exists(Baseline() / "utils/helper.py"));
  EXPECT_TRUE(fs::exists(Candidate() / "utils/new_name.py"));
  EXPECT_FALSE(fs::exists(Baseline() / "utils/new_name.py"));

  // infra_files.tar.gz holds exactly the class-B files, with their bytes.
  ASSERT_EQ(prepared->infra_tarball, "infra_files.tar.gz");
  ProcessOptions tar;
  tar.argv = {"tar", "-tzf", (report_ / "infra_files.tar.gz").string()};
  auto listed = RunProcess(tar);
  ASSERT_TRUE(listed.ok() && listed->success());
  EXPECT_EQ(listed->out, "scripts/run_train.sh\ntrain_configs/debug.toml\ntrain_configs/toy.toml\n");
  fs::create_directories(tmp_.path() / "untar");
  tar.argv = {"tar", "-xzf", (report_ / "infra_files.tar.gz").string(), "-C", (tmp_.path() / "untar").string()};
  ASSERT_TRUE(RunProcess(tar)->success());
  EXPECT_EQ(testing::ReadFile(tmp_.path() / "untar/scripts/run_train.sh"),
            testing::ReadFile(repos_.work / "scripts/run_train.sh"));

  // The ledger records both worktrees and the copy with the tar command.
  auto manifest = ledger::Read(report_);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const auto& entries = (*manifest)["entries"];
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0]["action"], "worktree_add");
  EXPECT_EQ(entries[0]["side"], "baseline");
  EXPECT_EQ(entries[0]["git"]["commit"], repos_.origin_tip);
  EXPECT_EQ(entries[1]["side"], "candidate");
  EXPECT_EQ(entries[1]["git"]["commit"], repos_.feature_tip);
  EXPECT_EQ(entries[2]["action"], "infra_copy");
  EXPECT_EQ(entries[2]["command"]["argv"][0], "tar");
  EXPECT_EQ(entries[2]["inputs"]["files"].size(), 5u);

  auto cleaned = CleanupWorktrees(repo_.get(), CleanupRequest{{}, false, report_});
  ASSERT_TRUE(cleaned.ok()) << cleaned.status().ToString();
  EXPECT_EQ(cleaned->removed.size(), 2u);
  EXPECT_FALSE(fs::exists(Baseline()));
  EXPECT_FALSE(fs::exists(Candidate()));
  EXPECT_THAT(testing::Git(repos_.work, {"worktree", "list", "--porcelain"}), ::testing::Not(HasSubstr("proj-")));
  EXPECT_EQ((*ledger::Read(report_))["entries"].size(), 5u);

  EXPECT_EQ(testing::FingerprintDiff(before, testing::Fingerprint(repos_.work)), "");
}

TEST_F(WorktreeTest, GitCommandLineCanRemoveParityWorktrees) {
  auto prepared = PrepareWorktrees(repo_.get(), Request());
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  // Dirty (parity's copies), so git wants --force like for any modified worktree.
  testing::Git(repos_.work, {"worktree", "remove", "--force", Baseline().string()});
  testing::Git(repos_.work, {"worktree", "remove", "--force", Candidate().string()});
  EXPECT_FALSE(fs::exists(Baseline()));
  auto listed = ListWorktrees(repo_.get());
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(WorktreeTest, ExistingWorktreePathIsRefusedAndNothingIsCreated) {
  fs::create_directories(Baseline());
  auto prepared = PrepareWorktrees(repo_.get(), Request());
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(prepared.status().message(), HasSubstr("already exists"));
  EXPECT_FALSE(fs::exists(Candidate()));
  EXPECT_TRUE(fs::is_empty(Baseline()));
  EXPECT_TRUE(ListWorktrees(repo_.get())->empty());
}

TEST_F(WorktreeTest, VanishedClassBFileIsRefusedBeforeAnythingIsCreated) {
  fs::remove(repos_.work / "train_configs/debug.toml");
  auto prepared = PrepareWorktrees(repo_.get(), Request());
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().kind(), ErrorKind::kNotFound);
  EXPECT_THAT(prepared.status().message(), HasSubstr("class-B file train_configs/debug.toml no longer exists"));
  EXPECT_FALSE(fs::exists(Baseline()));
  EXPECT_FALSE(fs::exists(Candidate()));
}

TEST_F(WorktreeTest, CancelledRequestCreatesNothing) {
  CancellationSource source;
  source.Cancel();
  PrepareRequest req = Request();
  req.cancel = source.token();
  auto prepared = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().kind(), ErrorKind::kCancelled);
  EXPECT_FALSE(fs::exists(Baseline()));
  EXPECT_FALSE(fs::exists(Candidate()));
  EXPECT_TRUE(ListWorktrees(repo_.get())->empty());
}

TEST_F(WorktreeTest, ClassesAreValidatedPerFile) {
  PrepareRequest req = Request();
  req.classes["notes.txt"] = "A";  // an untracked file cannot be the committed change under test
  auto prepared = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(prepared.status().message(), HasSubstr("notes.txt"));

  req = Request();
  req.classes["not/changed.py"] = "B";
  prepared = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(prepared.ok());
  EXPECT_THAT(prepared.status().message(), HasSubstr("not/changed.py"));
  EXPECT_FALSE(fs::exists(Baseline()));
}

TEST_F(WorktreeTest, CommittedFileChosenAsInfraIsCopiedToTheBaseline) {
  PrepareRequest req = Request();
  req.classes["utils/new_name.py"] = "B";
  auto prepared = PrepareWorktrees(repo_.get(), req);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  EXPECT_EQ(testing::ReadFile(Baseline() / "utils/new_name.py"), testing::ReadFile(Candidate() / "utils/new_name.py"));
}

TEST_F(WorktreeTest, WorktreePathInsideTheUserTreeIsRefused) {
  PrepareRequest req = Request();
  req.baseline_path = repos_.work / "wt";
  auto prepared = PrepareWorktrees(repo_.get(), req);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_THAT(prepared.status().message(), HasSubstr("inside the working tree"));
}

TEST_F(WorktreeTest, CleanupRefusesForeignWorktreesAndDirtyOnesWithoutForce) {
  fs::path other = tmp_.path() / "someone-elses";
  testing::Git(repos_.work, {"worktree", "add", "-q", "--detach", other.string(), "HEAD"});
  auto refused = RemoveParityWorktree(repo_.get(), other, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("not created by parity"));
  EXPECT_TRUE(fs::exists(other));

  auto unknown = RemoveParityWorktree(repo_.get(), tmp_.path() / "nothing-here", false);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().kind(), ErrorKind::kNotFound);

  auto prepared = PrepareWorktrees(repo_.get(), Request());
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  // parity's own copies do not count as changes ...
  auto foreign = ForeignChanges(Baseline(), {}, 50);
  ASSERT_TRUE(foreign.ok());
  EXPECT_FALSE(foreign->empty());  // ... only when parity's record of them is consulted
  testing::WriteFile(Candidate() / "outputs/loss.log", "step 1 loss 2.0\n");
  testing::WriteFile(Candidate() / "model.py", "edited by hand\n");

  auto dirty = CleanupWorktrees(repo_.get(), CleanupRequest{{Candidate()}, false, report_});
  ASSERT_FALSE(dirty.ok());
  EXPECT_EQ(dirty.status().kind(), ErrorKind::kFailedPrecondition);
  ASSERT_FALSE(dirty.status().evidence().empty());
  EXPECT_EQ(dirty.status().evidence()[0].value, "model.py\noutputs/loss.log\n");
  EXPECT_TRUE(fs::exists(Candidate()));

  // The baseline holds only parity's copies: removable without force.
  auto base = CleanupWorktrees(repo_.get(), CleanupRequest{{Baseline()}, false, report_});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  EXPECT_TRUE(base->removed[0].discarded.empty());

  auto forced = CleanupWorktrees(repo_.get(), CleanupRequest{{Candidate()}, true, report_});
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ(forced->removed[0].discarded, (std::vector<std::string>{"model.py", "outputs/loss.log"}));
  EXPECT_FALSE(fs::exists(Candidate()));
  EXPECT_TRUE(fs::exists(other));  // never touched
}

}  // namespace
}  // namespace parity::git
