// reproduce.json from the ledger that `parity premerge` wrote, and `parity reproduce`
// replaying all of it in a fresh directory: the trainings print the very same numbers, and
// the recorded compare_logs and msprobe_first_diff calls, run again on the rerun's outputs,
// give the same verdict, statistics and first divergent API.
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

std::string Action(const json& step) {
  return step["action"].get<std::string>() + ":" + (step["side"].is_string() ? step["side"].get<std::string>() : "-");
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
  for (const auto& s : r["steps"]) actions.push_back(Action(s));
  // premerge: initial checkpoint (cleared folder, run, moved into the report directory), the
  // baseline twice (gate 1) and the candidate, gate 1's compare and the case's; then the hunt:
  // one dump run per side and msprobe_first_diff.
  EXPECT_EQ(actions, (std::vector<std::string>{"clear_checkpoint:-", "gen_ckpt:-", "move_checkpoint:-",
                                               "clear_checkpoint:baseline", "train:baseline",
                                               "clear_checkpoint:baseline_r2", "train:baseline_r2",
                                               "clear_checkpoint:candidate", "train:candidate", "compare:both",
                                               "compare:both", "train:baseline", "train:candidate",
                                               "first_diff:both"}))
      << r["steps"].dump(2);
  const json& move = r["steps"][2];
  EXPECT_EQ(move["argv"][0], "mv");
  EXPECT_EQ(move["argv"][3], r["candidate"]["worktree"].get<std::string>() + "/outputs/checkpoint/step-1");
  EXPECT_EQ(move["argv"][4], r["report_dir"].get<std::string>() + "/initial_ckpt_toy_small");
  const json& train = r["steps"][4];
  EXPECT_EQ(train["cwd"], r["baseline"]["worktree"]);
  EXPECT_NE(train["argv"].dump().find("--debug.deterministic"), std::string::npos);
  EXPECT_NE(train["argv"].dump().find("--checkpoint.initial_load_path"), std::string::npos);
  const json& compare = r["steps"][9];
  EXPECT_EQ(compare["argv"][0], "parity");
  EXPECT_EQ(compare["argv"][2], "compare_logs");
  EXPECT_NE(compare["argv"][3].get<std::string>().find("tfevents"), std::string::npos);
}

// The numbers a run printed, without colours.
std::vector<std::string> StepLines(const fs::path& log) {
  static const std::regex kStep(R"(step:\s*\d+\s+loss:\s*\S+\s+grad_norm:\s*\S+)");
  static const std::regex kAnsi("\x1b\\[[0-9;]*m");
  std::string text = std::regex_replace(Slurp(log), kAnsi, "");
  std::vector<std::string> lines;
  for (std::sregex_iterator it(text.begin(), text.end(), kStep), end; it != end; ++it) lines.push_back(it->str());
  return lines;
}

TEST(Reproduce, ParityReproduceReplaysTrainingsCompareAndHuntToTheSameResults) {
  fs::path dir;
  json r = RenderReproduce("gelu_tanh", "replay", &dir);
  fs::path rerun = dir.parent_path() / "rerun";
  auto run = RunOrFail({PARITY_BINARY, "reproduce", (dir / "report" / "reproduce.json").string(), "--work-dir",
                        rerun.string()},
                       590);
  ASSERT_TRUE(run.success()) << run.out;
  EXPECT_NE(run.out.find("infra patch active"), std::string::npos) << "the infra file was not used";
  // The compare read the rerun's own TensorBoard files, whose names carry a new time and pid.
  EXPECT_NE(run.out.find("was written as " + (rerun / "numerical_report" / "tb").string()), std::string::npos) << run.out;
  const fs::path again = rerun / "numerical_report";

  for (const char* log : {"baseline_toy_small_train.log", "candidate_toy_small_train.log"}) {
    auto before = StepLines(dir / log);
    ASSERT_EQ(before.size(), 10u) << log;
    EXPECT_EQ(StepLines(again / log), before) << log << ": the replay printed different numbers";
  }

  json first = ReadJson(dir / "toy_small" / "report.json");
  json second = ReadJson(again / "toy_small" / "report.json");
  ASSERT_TRUE(second.is_object()) << "the replayed compare wrote no report.json";
  EXPECT_EQ(second["verdict"], "FAIL");
  EXPECT_EQ(second["verdict"], first["verdict"]);
  EXPECT_EQ(second["mode"], first["mode"]);
  for (const auto& [metric, stats] : first["metrics"].items()) {
    for (const char* k : {"steps_compared", "max_abs", "max_abs_step", "mean_abs", "max_rel", "max_rel_step",
                          "mean_rel", "first_exceeding_step", "exceeding_count", "bitwise_equal", "nan_inf"}) {
      EXPECT_EQ(second["metrics"][metric][k], stats[k]) << metric << "." << k;
    }
  }
  EXPECT_EQ(Slurp(again / "toy_small" / "diff_summary.csv"), Slurp(dir / "toy_small" / "diff_summary.csv"));

  json hunt = ReadJson(again / "hunt" / "hunt.json");
  json hunt_before = ReadJson(dir / "hunt" / "hunt.json");
  ASSERT_TRUE(hunt.is_object()) << "the replayed msprobe_first_diff wrote no hunt.json";
  EXPECT_EQ(hunt["first_divergence"]["api"], "Functional.gelu.0.forward");
  EXPECT_EQ(hunt["first_divergence"]["inputs_equal"], hunt_before["first_divergence"]["inputs_equal"]);
  EXPECT_EQ(hunt["first_divergence"]["source"]["hunk"], hunt_before["first_divergence"]["source"]["hunk"]);
  EXPECT_EQ(hunt["counts"], hunt_before["counts"]);

  // The user's repository was only read.
  EXPECT_EQ(RevParse(r["repo"]["path"], "numerics/gelu-tanh"), r["candidate"]["commit"]);
}

TEST(Reproduce, ACompareWhoseInputsTheRerunDidNotWriteFailsNamingTheArgument) {
  fs::path dir;
  json r = RenderReproduce("refactor", "replay_compare_only", &dir);
  json steps = json::array();
  for (const auto& s : r["steps"])  // the case's own compare (the premerge also compares gate 1)
    if (s["tool"] == "compare_logs" && s["config"] == "toy_small") steps.push_back(s);
  ASSERT_EQ(steps.size(), 1u);
  r["steps"] = steps;
  fs::path file = dir / "report" / "compare_only.json";
  std::ofstream(file) << r.dump(2);
  auto run = RunOrFail({PARITY_BINARY, "reproduce", file.string(), "--work-dir", (dir.parent_path() / "rerun").string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("arguments.baseline of parity call compare_logs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("is not in the rerun"), std::string::npos) << run.out;
}

TEST(Reproduce, AStepThatWouldActOutsideTheWorkDirectoryIsRefused) {
  fs::path dir;
  json r = RenderReproduce("refactor", "replay_outside", &dir);
  fs::path victim = dir.parent_path() / "not_the_rerun";
  fs::create_directories(victim / "keep");
  json clear;
  for (const auto& s : r["steps"])
    if (s["action"] == "clear_checkpoint") clear = s;
  ASSERT_TRUE(clear.is_object());
  clear["argv"] = {"rm", "-rf", "--", victim.string()};  // a path no recorded place maps
  r["steps"] = json::array({clear});
  fs::path file = dir / "report" / "outside.json";
  std::ofstream(file) << r.dump(2);
  auto run = RunOrFail({PARITY_BINARY, "reproduce", file.string(), "--work-dir", (dir.parent_path() / "rerun").string()});
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("is outside the work directory"), std::string::npos) << run.out;
  EXPECT_TRUE(fs::exists(victim / "keep"));
}

TEST(Reproduce, PrintShowsTheStepsAndRunsNothing) {
  fs::path dir;
  json r = RenderReproduce("refactor", "replay_print", &dir);
  auto run = RunOrFail({PARITY_BINARY, "reproduce", dir.string(), "--print"});
  ASSERT_TRUE(run.success()) << run.out;
  EXPECT_NE(run.out.find("$ git clone"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("mv -T --"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("compare_logs"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists("parity-reproduce"));
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
