// The git side of the hunt, on a real repository built with the git CLI: the fixture's
// train.py committed twice, the candidate commit planting a change on line 64; the hunk
// returned must be that change, and a line outside it must be reported as unchanged.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "domain/msprobe/analyze.h"
#include "domain/msprobe/source_locator.h"
#include "tests/msprobe/fixtures.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using testing::MsprobeFixtures;
using testing::Run;
using testing::TempDir;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A repo whose baseline commit has the exact GELU on line 64 and whose candidate commit is
// the fixture's train.py (GELU with approximate=...).
struct PlantedRepo {
  TempDir dir;
  fs::path repo;
  PlantedRepo(const fs::path& fixtures) {
    repo = dir.path() / "toy-block";
    fs::create_directories(repo);
    std::string candidate = ReadAll(fixtures / "train.py");
    std::string baseline = candidate;
    std::string changed = "return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))";
    size_t at = baseline.find(changed);
    EXPECT_NE(at, std::string::npos);
    baseline.replace(at, changed.size(), "return self.fc2(F.gelu(self.fc1(x)))");
    Run({"git", "init", "-q", "-b", "main"}, repo);
    std::ofstream(repo / "train.py") << baseline;
    Run({"git", "add", "train.py"}, repo);
    Run({"git", "commit", "-q", "-m", "baseline"}, repo);
    Run({"git", "tag", "base"}, repo);
    std::ofstream(repo / "train.py") << candidate;
    Run({"git", "commit", "-q", "-am", "candidate: tanh GELU"}, repo);
  }
};

TEST(SourceLocator, FindsThePlantedHunkForTheDivergentLine) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  PlantedRepo planted(fixtures);
  Frame frame = *ParseFrame(
      "File /home/ma-user/work/toy-block/train.py, line 64, in forward, \n return self.fc2(F.gelu(self.fc1(x), "
      "approximate=self.approximate))");
  LocateOptions options;
  options.worktree = planted.repo;
  options.baseline_ref = "base";
  options.candidate_ref = "main";
  SourceLocation loc = LocateSource(frame, options);
  ASSERT_TRUE(loc.local) << ToJson(loc).dump(2);
  EXPECT_EQ(loc.mapped_by, "suffix");
  EXPECT_TRUE(loc.matches_recorded.value_or(false));
  ASSERT_TRUE(loc.hunk) << ToJson(loc).dump(2);
  EXPECT_EQ(loc.hunk->file, "train.py");
  EXPECT_EQ(loc.hunk->new_start, 64);
  ASSERT_EQ(loc.hunk->lines.size(), 2u);
  EXPECT_EQ(loc.hunk->lines[0], "-        return self.fc2(F.gelu(self.fc1(x)))");
  EXPECT_EQ(loc.hunk->lines[1], "+        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))");

  frame.line = 90;  // unchanged
  frame.code = "return self.head(self.ln_f(self.block(self.inp(x))))";
  SourceLocation other = LocateSource(frame, options);
  EXPECT_TRUE(other.git_checked);
  EXPECT_FALSE(other.hunk);
  EXPECT_TRUE(other.matches_recorded.value_or(false));
}

// testing::Run, by a name gtest's TestBody does not hide.
int Git(const std::vector<std::string>& argv, const fs::path& cwd) { return Run(argv, cwd); }

// repo = the user's repository (still on the baseline), worktree = a linked worktree of it
// holding the candidate branch (what `git worktree add` and audit_workspace make): the line is
// read from the worktree and the hunk diffed in the repository the worktree belongs to, with
// HEAD being the worktree's (the candidate), not the main checkout's.
TEST(SourceLocator, LinkedWorktreeOfTheRepoGetsItsHunk) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  PlantedRepo planted(fixtures);
  ASSERT_EQ(Git({"git", "branch", "candidate", "main"}, planted.repo), 0);
  ASSERT_EQ(Git({"git", "reset", "-q", "--hard", "base"}, planted.repo), 0);  // the main checkout is the baseline
  fs::path linked = planted.dir.path() / "wt-candidate";
  ASSERT_EQ(Git({"git", "worktree", "add", "-q", linked.string(), "candidate"}, planted.repo), 0);

  Frame frame = *ParseFrame(
      "File /home/ma-user/work/toy-block/train.py, line 64, in forward, \n return self.fc2(F.gelu(self.fc1(x), "
      "approximate=self.approximate))");
  LocateOptions options;
  options.repo = planted.repo;
  options.worktree = linked;
  options.baseline_ref = "base";
  SourceLocation loc = LocateSource(frame, options);
  ASSERT_TRUE(loc.local) << ToJson(loc).dump(2);
  EXPECT_EQ(fs::weakly_canonical(*loc.local), fs::weakly_canonical(linked / "train.py"));
  EXPECT_TRUE(loc.matches_recorded.value_or(false)) << ToJson(loc).dump(2);
  EXPECT_TRUE(loc.git_checked) << ToJson(loc).dump(2);
  ASSERT_TRUE(loc.hunk) << ToJson(loc).dump(2);
  EXPECT_EQ(loc.hunk->file, "train.py");
  EXPECT_EQ(loc.hunk->new_start, 64);
  ASSERT_EQ(loc.hunk->lines.size(), 2u);
  EXPECT_EQ(loc.hunk->lines[1], "+        return self.fc2(F.gelu(self.fc1(x), approximate=self.approximate))");

  // A folder that is a different repository is still refused, with a note naming both.
  TempDir other;
  fs::create_directories(other.path() / "r");
  ASSERT_EQ(Git({"git", "init", "-q", "-b", "main"}, other.path() / "r"), 0);
  std::ofstream(other.path() / "r" / "train.py") << "x\n";
  ASSERT_EQ(Git({"git", "add", "train.py"}, other.path() / "r"), 0);
  ASSERT_EQ(Git({"git", "commit", "-q", "-m", "other"}, other.path() / "r"), 0);
  options.worktree = other.path() / "r";
  SourceLocation foreign = LocateSource(frame, options);
  EXPECT_FALSE(foreign.git_checked);
  bool named = false;
  for (const auto& note : foreign.notes) named |= note.find("not inside the repository") != std::string::npos;
  EXPECT_TRUE(named) << ToJson(foreign).dump(2);
}

TEST(SourceLocator, PathMapWinsAndMissingThingsAreNotesNotErrors) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  PlantedRepo planted(fixtures);
  Frame frame = *ParseFrame("File /home/ma-user/work/toy-block/train.py, line 64, in forward, \n x");
  LocateOptions options;
  options.path_map = {{"/home/ma-user/work/toy-block/", planted.repo.string()}};
  options.baseline_ref = "no-such-ref";
  SourceLocation loc = LocateSource(frame, options);
  EXPECT_EQ(loc.mapped_by, "path_map");
  EXPECT_FALSE(loc.matches_recorded.value_or(true));  // recorded code "x" is not the line
  EXPECT_FALSE(loc.git_checked);
  bool named = false;
  for (const auto& note : loc.notes) named |= note.find("no-such-ref") != std::string::npos;
  EXPECT_TRUE(named) << ToJson(loc).dump(2);

  LocateOptions nothing;
  SourceLocation lost = LocateSource(frame, nothing);
  EXPECT_FALSE(lost.local);
  EXPECT_FALSE(lost.notes.empty());
}

TEST(SourceLocator, EndToEndOnTheRealDumpsReturnsThePlantedHunk) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  PlantedRepo planted(fixtures);
  TempDir out;
  AnalyzeOptions options;
  options.baseline_dump = fixtures / "dumps/baseline/md5_mix";
  options.candidate_dump = fixtures / "dumps/candidate/md5_mix";
  options.locate.worktree = planted.repo;
  options.locate.baseline_ref = "base";
  options.output_dir = out.path();
  auto hunt = AnalyzeFirstDiff(options);
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  const auto& source = (*hunt)["first_divergence"]["source"];
  EXPECT_EQ((*hunt)["first_divergence"]["api"], "Functional.gelu.0.forward");
  EXPECT_TRUE(source["in_changed_hunk"].get<bool>()) << source.dump(2);
  EXPECT_EQ(source["hunk"]["new_start"], 64);
  EXPECT_FALSE((*hunt)["first_divergence"]["modules"].empty());  // mix level: construct.json parents
}

}  // namespace
}  // namespace parity::msprobe
