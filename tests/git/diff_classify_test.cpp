#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/git/classify.h"
#include "domain/git/diff.h"
#include "domain/git/git_handle.h"
#include "domain/git/refs.h"
#include "tests/git/git_fixture.h"

namespace parity::git {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::DemoRepos;
using testing::TempDir;

class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repos_ = testing::MakeDemoRepos(tmp_.path());
    auto repo = OpenRepository(repos_.work);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(repo).value();
    auto b = ResolveBaseline(repo_.get(), "origin/master");
    auto c = ResolveCommit(repo_.get(), "HEAD");
    ASSERT_TRUE(b.ok() && c.ok());
    baseline_ = *b;
    candidate_ = *c;
  }
  TempDir tmp_;
  DemoRepos repos_;
  RepoPtr repo_;
  CommitInfo baseline_, candidate_;
};

// The per-file counts agree with `git diff --numstat -M` from the git command line.
TEST_F(DiffTest, CommittedStatMatchesGitNumstat) {
  auto stat = DiffCommits(repo_.get(), baseline_, candidate_, 1000);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  std::string numstat = testing::Git(repos_.work, {"diff", "--numstat", "-M", "origin/master..HEAD"});
  std::map<std::string, std::pair<size_t, size_t>> expected;
  std::istringstream lines(numstat);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    size_t add = 0, del = 0;
    std::string path;
    fields >> add >> del;
    std::getline(fields >> std::ws, path);
    expected[path] = {add, del};
  }
  ASSERT_EQ(stat->files.size(), expected.size()) << numstat;
  for (const auto& f : stat->files) {
    std::string key = f.old_path ? "utils/{old_name.py => new_name.py}" : f.path;
    ASSERT_TRUE(expected.count(key)) << key << " not in\n" << numstat;
    EXPECT_EQ(f.additions, expected[key].first) << key;
    EXPECT_EQ(f.deletions, expected[key].second) << key;
  }
  const FileStat& renamed = stat->files[1];
  EXPECT_EQ(renamed.change, "renamed");
  EXPECT_EQ(renamed.path, "utils/new_name.py");
  EXPECT_EQ(renamed.old_path, "utils/old_name.py");
  EXPECT_EQ(stat->files[0].path, "model.py");
  EXPECT_EQ(stat->files[0].additions, 2u);
  EXPECT_EQ(stat->files[0].deletions, 1u);
}

TEST_F(DiffTest, UncommittedStatIncludesStagedUnstagedAndUntracked) {
  auto stat = DiffUncommitted(repo_.get(), 1000);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  std::map<std::string, std::string> changes;
  for (const auto& f : stat->files) changes[f.path] = f.change + " +" + std::to_string(f.additions) + " -" + std::to_string(f.deletions);
  EXPECT_EQ(changes, (std::map<std::string, std::string>{
                         {"model.py", "modified +1 -0"},
                         {"notes.txt", "untracked +1 -0"},
                         {"scripts/run_train.sh", "modified +1 -0"},
                         {"train_configs/debug.toml", "untracked +2 -0"},
                         {"train_configs/toy.toml", "modified +1 -1"},
                         {"utils/helper.py", "untracked +2 -0"}}));
}

TEST_F(DiffTest, LargeUntrackedFileIsBinaryAndNotCounted) {
  fs::path big = repos_.work / "checkpoint.bin";
  { std::ofstream(big) << "x"; }
  fs::resize_file(big, std::uintmax_t{17} << 20);  // sparse: nothing is written to disk
  auto stat = DiffUncommitted(repo_.get(), 1000);
  ASSERT_TRUE(stat.ok()) << stat.status().ToString();
  bool seen = false;
  for (const auto& f : stat->files) {
    if (f.path != "checkpoint.bin") continue;
    seen = true;
    EXPECT_TRUE(f.binary);
    EXPECT_EQ(f.additions, 0u);
  }
  EXPECT_TRUE(seen);
}

TEST_F(DiffTest, MaxFilesCutsTheListAndSaysSo) {
  auto stat = DiffUncommitted(repo_.get(), 2);
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->files.size(), 2u);
  EXPECT_TRUE(stat->truncated);
}

TEST_F(DiffTest, ProposesTheSkillsClassesWithReasons) {
  auto cl = ProposeClassification(repo_.get(), baseline_, candidate_, ClassifyOptions{});
  ASSERT_TRUE(cl.ok()) << cl.status().ToString();
  std::map<std::string, std::string> proposed;
  std::map<std::string, std::string> origin;
  for (const auto& f : cl->files) {
    proposed[f.path] = f.proposed;
    origin[f.path] = OriginName(f.origin);
    EXPECT_FALSE(f.reason.empty()) << f.path;
    EXPECT_NE(std::find(f.allowed.begin(), f.allowed.end(), f.proposed), f.allowed.end()) << f.path;
  }
  EXPECT_EQ(proposed, (std::map<std::string, std::string>{
                          {"model.py", "C"},                   // committed and edited again: the edit is candidate-only
                          {"utils/new_name.py", "A"},          // committed rename: under test
                          {"scripts/run_train.sh", "B"},       // uncommitted launcher tweak: both sides
                          {"train_configs/toy.toml", "B"},     // staged config change
                          {"train_configs/debug.toml", "B"},   // untracked config
                          {"utils/helper.py", "C"},            // untracked source
                          {"notes.txt", "ignore"}}));
  EXPECT_EQ(origin["model.py"], "committed+uncommitted");
  EXPECT_EQ(origin["utils/new_name.py"], "committed");
  EXPECT_EQ(origin["train_configs/toy.toml"], "uncommitted");
  EXPECT_EQ(origin["notes.txt"], "untracked");
  EXPECT_EQ(cl->files[0].path, "model.py");  // committed ones first
}

TEST_F(DiffTest, ReportDirectoryInsideTheRepoIsIgnored) {
  testing::WriteFile(repos_.work / "numerical_report/manifest.json", "{}\n");
  ClassifyOptions options;
  options.own_output_dir = "numerical_report";
  auto cl = ProposeClassification(repo_.get(), baseline_, candidate_, options);
  ASSERT_TRUE(cl.ok());
  bool seen = false;
  for (const auto& f : cl->files) {
    if (f.path != "numerical_report/manifest.json") continue;
    seen = true;
    EXPECT_EQ(f.proposed, "ignore");
    EXPECT_THAT(f.reason, HasSubstr("report directory"));
  }
  EXPECT_TRUE(seen);
}

TEST(InfraReason, RecognisesLaunchersAndConfigs) {
  EXPECT_TRUE(InfraReason("scripts/run_train.sh"));
  EXPECT_TRUE(InfraReason("run.sh"));
  EXPECT_TRUE(InfraReason("torchtitan/models/llama3/train_configs/debug_model.toml"));
  EXPECT_TRUE(InfraReason("requirements-dev.txt"));
  EXPECT_TRUE(InfraReason("tools/scripts/prepare.py"));
  EXPECT_FALSE(InfraReason("torchtitan/models/llama3/model.py"));
  EXPECT_FALSE(InfraReason("README.md"));
  EXPECT_FALSE(InfraReason("notes.txt"));
}

}  // namespace
}  // namespace parity::git
