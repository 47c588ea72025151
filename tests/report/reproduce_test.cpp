// reproduce.json from the ledger of real runs, and `Replay` rerunning the recorded
// trainings in fresh worktrees: the rerun must print the very same numbers.
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "domain/report/render.h"
#include "domain/report/reproduce.h"
#include "e2e_util.h"

namespace parity::report {
namespace {

namespace fs = std::filesystem;
using testing::ReadJson;
using testing::RunOrFail;
using testing::Slurp;

json RenderReproduce(const std::string& fixture, const std::string& name, fs::path* dir_out = nullptr) {
  fs::path dir = testing::CopyReportDir(fixture, name);
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"reproduce"};
  auto r = RenderReport(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (dir_out) *dir_out = dir;
  return ReadJson(dir / "report" / "reproduce.json");
}

std::string RevParse(const std::string& repo, const std::string& ref) {
  auto r = RunOrFail({"git", "-C", repo, "rev-parse", ref});
  return r.out.substr(0, r.out.find('\n'));
}

TEST(Reproduce, BuiltFromTheLedgerWithTheRealCommitsAndCommands) {
  json r = RenderReproduce("gelu_tanh", "reproduce_built");
  const std::string repo = r["repo"]["path"];
  EXPECT_EQ(r["baseline"]["commit"], RevParse(repo, "main"));
  EXPECT_EQ(r["candidate"]["commit"], RevParse(repo, "numerics/gelu-tanh"));
  EXPECT_EQ(r["baseline"]["on_remotes"], json({"cann", "origin"}));
  EXPECT_EQ(r["candidate"]["on_remotes"], json::array());
  ASSERT_EQ(r["warnings"].size(), 1u);  // the candidate branch was never pushed
  EXPECT_NE(r["warnings"][0].get<std::string>().find("push numerics/gelu-tanh"), std::string::npos);
  EXPECT_EQ(r["infra"]["files"], json({"scripts/run_train.sh"}));

  std::vector<std::string> actions;
  for (const auto& s : r["steps"]) actions.push_back(s["action"].get<std::string>() + ":" +
                                                     (s["side"].is_string() ? s["side"].get<std::string>() : "-"));
  EXPECT_EQ(actions, (std::vector<std::string>{"gen_ckpt:candidate", "train:baseline", "train:candidate", "compare:both"}));
  const json& train = r["steps"][1];
  EXPECT_EQ(train["cwd"], r["baseline"]["worktree"]);
  EXPECT_EQ(train["env"]["PYTHONHASHSEED"], "0");
  EXPECT_NE(train["argv"].dump().find("--debug.deterministic"), std::string::npos);
  const json& compare = r["steps"][3];
  EXPECT_EQ(compare["argv"][0], "parity");
  EXPECT_EQ(compare["argv"][2], "compare_logs");
}

TEST(Reproduce, ReplayRerunsTheTrainingsInFreshWorktreesBitwise) {
  fs::path dir;
  json r = RenderReproduce("refactor", "replay", &dir);
  // The compare step needs the compare_logs tool in the parity binary; this test replays
  // the trainings, which are what a stranger cannot take on trust.
  json steps = json::array();
  for (const auto& s : r["steps"])
    if (s["tool"] == "run_training") steps.push_back(s);
  ASSERT_EQ(steps.size(), 3u);
  r["steps"] = steps;
  fs::path file = dir / "report" / "reproduce_trainings.json";
  std::ofstream(file) << r.dump(2);

  ReplayOptions o;
  o.reproduce_json = file;
  o.work_dir = dir.parent_path() / "rerun";
  std::string printed;
  o.print = [&](const std::string& text) { printed += text; };
  Status s = Replay(o);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << printed;
  EXPECT_TRUE(fs::is_directory(o.work_dir / "worktrees" / "baseline" / ".git") ||
              fs::is_regular_file(o.work_dir / "worktrees" / "baseline" / ".git"));
  // The infra file came out of the tarball into both worktrees.
  EXPECT_NE(Slurp(o.work_dir / "worktrees" / "candidate" / "scripts" / "run_train.sh").find("infra patch"),
            std::string::npos);
  EXPECT_NE(printed.find("infra patch active"), std::string::npos);

  static const std::regex kStep(R"(step:\s*\d+\s+loss:\s*\S+\s+grad_norm:\s*\S+)");
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  auto step_lines = [](const fs::path& log) {
    std::string text = std::regex_replace(Slurp(log), kAnsi, "");
    std::vector<std::string> lines;
    for (std::sregex_iterator it(text.begin(), text.end(), kStep), end; it != end; ++it) lines.push_back(it->str());
    return lines;
  };
  for (const char* original : {"baseline_toy_small_train.log", "candidate_toy_small_train.log"}) {
    auto before = step_lines(dir / original);
    auto after = step_lines(o.work_dir / "numerical_report" / original);  // where the original log was
    ASSERT_EQ(before.size(), 20u) << original;
    EXPECT_EQ(after, before) << original << ": the replay printed different numbers";
  }
}

TEST(Reproduce, ReplayRefusesAFileWithAMissingValueNamingTheField) {
  fs::path dir;
  json r = RenderReproduce("refactor", "replay_refuse", &dir);
  r["steps"][1].erase("argv");
  fs::path file = dir / "report" / "broken.json";
  std::ofstream(file) << r.dump();
  ReplayOptions o;
  o.reproduce_json = file;
  o.work_dir = dir.parent_path() / "rerun";
  Status s = Replay(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reproduce.steps[1].argv: required field is missing"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(o.work_dir));

  fs::create_directories(o.work_dir / "something");
  o.reproduce_json = dir / "report" / "reproduce.json";
  s = Replay(o);
  EXPECT_EQ(s.kind(), ErrorKind::kFailedPrecondition) << s.ToString();
}

}  // namespace
}  // namespace parity::report
