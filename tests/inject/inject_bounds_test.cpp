// inject_prints' state is data: a crafted .parity_inject/state.json must not make revert
// write bytes outside the worktree or delete the evidence, revert and status act only on
// worktrees parity made, and a symlink planted in the worktree (.parity_inject, a backup,
// a target) never redirects a write. Each case is a real folder with a real parity worktree.
#include <gtest/gtest.h>

#include "domain/inject/inject.h"
#include "tests/inject/inject_fixture.h"

namespace parity::inject {
namespace {

// A state.json naming `path`, with the hashes of `original` (the backup) and of the file as
// it is now, so every hash check passes and only the path is wrong.
json CraftedState(const std::string& path, const std::string& original, const std::string& now) {
  return {{"schema", "parity.inject/1"},
          {"helper", "_parity_probe.py"},
          {"files", json::array({{{"path", path}, {"sha256_original", Sha256Hex(original)},
                                  {"sha256_injected", Sha256Hex(now)}, {"backup", ".parity_inject/orig/x"}}})}};
}

void Plant(const fs::path& folder, const json& state, const std::string& backup_rel, const std::string& bytes) {
  fs::create_directories(folder / ".parity_inject" / "orig" / fs::path(backup_rel).parent_path());
  std::ofstream(folder / ".parity_inject" / "state.json") << state.dump();
  std::ofstream(folder / ".parity_inject" / "orig" / backup_rel, std::ios::binary) << bytes;
}

TEST_F(InjectTest, RevertOfACraftedStateOutsideAParityWorktreeTouchesNothing) {
  fs::path victim = root_ / "victim.txt";
  std::ofstream(victim) << "precious\n";
  fs::path folder = root_ / "cloned";  // any folder, e.g. a cloned repository
  fs::create_directories(folder);
  Plant(folder, CraftedState(victim.string(), "owned\n", "precious\n"), "x", "owned\n");
  auto r = Revert(folder, /*force=*/true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(ReadAll(victim), "precious\n");
  EXPECT_TRUE(fs::exists(folder / ".parity_inject" / "state.json"));  // the evidence stays
  EXPECT_FALSE(InjectStatus(folder).ok());
  EXPECT_FALSE(Revert(repo_, true).ok());  // the user's own tree is not a parity worktree either
}

TEST_F(InjectTest, RevertRefusesAbsoluteAndDotDotPathsEvenInItsOwnWorktree) {
  fs::path victim = root_ / "victim.txt";
  std::ofstream(victim) << "precious\n";
  for (std::string path : {victim.string(), std::string("../victim.txt"), std::string("pkg/../../victim.txt")}) {
    SCOPED_TRACE(path);
    fs::remove_all(worktree_ / ".parity_inject");
    Plant(worktree_, CraftedState(path, "owned\n", "precious\n"), "pkg/x", "owned\n");
    auto r = Revert(worktree_, /*force=*/true);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("not a path inside the worktree"), std::string::npos) << r.status().message();
    EXPECT_EQ(ReadAll(victim), "precious\n");
    EXPECT_TRUE(fs::exists(worktree_ / ".parity_inject" / "state.json"));
  }
}

TEST_F(InjectTest, ASymlinkedStateFolderOrBackupIsNotFollowed) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  fs::create_directory_symlink(outside, worktree_ / ".parity_inject");
  auto injected = Inject(Opts({{"pkg/model.py", 18, std::nullopt, false}}));
  ASSERT_FALSE(injected.ok());
  EXPECT_NE(injected.status().message().find("is a symlink"), std::string::npos) << injected.status().ToString();
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  fs::remove(worktree_ / ".parity_inject");

  // A real injection whose saved original is then swapped for a link to another file.
  ASSERT_TRUE(Inject(Opts({{"pkg/model.py", 18, std::nullopt, false}})).ok());
  fs::path backup = worktree_ / ".parity_inject" / "orig" / "pkg" / "model.py";
  std::ofstream(outside / "model.py") << original_;
  fs::remove(backup);
  fs::create_symlink(outside / "model.py", backup);
  auto reverted = Revert(worktree_, true);
  ASSERT_FALSE(reverted.ok());
  EXPECT_NE(reverted.status().message().find("is a symlink"), std::string::npos) << reverted.status().ToString();
}

TEST_F(InjectTest, ATargetThatIsASymlinkOutOfTheWorktreeIsRefused) {
  fs::path outside = root_ / "outside.py";
  std::ofstream(outside) << "def f(x):\n    y = x + 1\n    return y\n";
  fs::create_symlink(outside, worktree_ / "pkg" / "linked.py");
  auto r = Inject(Opts({{"pkg/linked.py", 2, std::nullopt, false}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not inside the worktree"), std::string::npos) << r.status().message();
  EXPECT_EQ(ReadAll(outside), "def f(x):\n    y = x + 1\n    return y\n");
}

TEST_F(InjectTest, ANestedStateFileIsAClearErrorNotACrash) {
  fs::create_directories(worktree_ / ".parity_inject");
  std::ofstream(worktree_ / ".parity_inject" / "state.json") << std::string(100000, '[') << std::string(100000, ']');
  auto r = InjectStatus(worktree_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nesting deeper than"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace parity::inject
