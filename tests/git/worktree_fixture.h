// The repositories of git_fixture.h opened with libgit2, with the classification of
// origin/master..feature and a prepare request confirming every proposed class: the fixture
// of the worktree tests (prepare, cleanup, an earlier run's worktrees).
#pragma once

#include <filesystem>

#include <gtest/gtest.h>

#include "domain/git/classify.h"
#include "domain/git/git_handle.h"
#include "domain/git/prepare.h"
#include "domain/git/refs.h"
#include "tests/git/git_fixture.h"

namespace parity::git::testing {

namespace fs = std::filesystem;

class WorktreeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    repos_ = MakeDemoRepos(tmp_.path());
    report_ = tmp_.path() / "report";
    auto repo = OpenRepository(repos_.work);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(repo).value();
    auto b = ResolveBaseline(repo_.get(), "origin/master");
    auto c = ResolveCommit(repo_.get(), "feature");
    ASSERT_TRUE(b.ok() && c.ok());
    auto cl = ProposeClassification(repo_.get(), *b, *c, ClassifyOptions{});
    ASSERT_TRUE(cl.ok()) << cl.status().ToString();
    classification_ = *cl;
  }

  PrepareRequest Request() {
    PrepareRequest req;
    req.classification = classification_;
    for (const auto& f : classification_.files) req.classes[f.path] = f.proposed;
    req.report_dir = report_;
    return req;
  }

  fs::path Baseline() const { return tmp_.path() / "proj-baseline"; }
  fs::path Candidate() const { return tmp_.path() / "proj-candidate"; }

  TempDir tmp_;
  DemoRepos repos_;
  fs::path report_;
  RepoPtr repo_;
  Classification classification_;
};

}  // namespace parity::git::testing
