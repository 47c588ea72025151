// PrecisionComparer's run_script made runnable in a worktree (hunt_script.h: words, the
// leading VAR=value environment, paths into the worktree, the step flag), the baseline line
// mapping of hunt_repo.h and parity's additions to the config's format.
#include <gtest/gtest.h>

#include "domain/workflow/comparer_config.h"
#include "domain/workflow/hunt_repo.h"
#include "domain/workflow/hunt_script.h"

namespace parity::workflow {
namespace {

using nlohmann::json;

TEST(HuntScript, SplitsWordsAndRefusesShellSyntax) {
  auto words = SplitRunScript("bash  /c/run.sh --training.steps 20", "config.json.test.run_script");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"bash", "/c/run.sh", "--training.steps", "20"}));
  for (std::string bad : {"bash run.sh > log", "cd /c && bash run.sh", "bash run.sh $ARGS", "bash 'run.sh'"}) {
    auto r = SplitRunScript(bad, "config.json.test.run_script");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("config.json.test.run_script: contains shell syntax"), std::string::npos)
        << r.status().message();
  }
  EXPECT_FALSE(SplitRunScript("   ", "x").ok());
}

TEST(HuntScript, LeadingAssignmentsAreTheChildsEnvironmentTakenLiterally) {
  auto s = ParseRunScript("ASCEND_RT_VISIBLE_DEVICES=0,1 _x9=a=b  NGPU=1 bash run.sh --x=1 Y=2", "c.run_script");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->env, (std::map<std::string, std::string>{{"ASCEND_RT_VISIBLE_DEVICES", "0,1"}, {"NGPU", "1"}, {"_x9", "a=b"}}));
  EXPECT_EQ(s->argv, (std::vector<std::string>{"bash", "run.sh", "--x=1", "Y=2"})) << "only leading words are assignments";
  EXPECT_TRUE(s->literal_values.empty());
  // Nothing is expanded or unquoted: the value is the characters written.
  s = ParseRunScript("A=$(id) B=`id` C='q' D=$HOME bash run.sh", "c.run_script");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->env.at("A"), "$(id)");
  EXPECT_EQ(s->env.at("B"), "`id`");
  EXPECT_EQ(s->env.at("C"), "'q'");
  EXPECT_EQ(s->env.at("D"), "$HOME");
  EXPECT_EQ(s->literal_values, (std::vector<std::string>{"A=$(id)", "B=`id`", "C='q'", "D=$HOME"}));
  // Not names (POSIX: [A-Za-z_][A-Za-z0-9_]*): part of the command, which must be plain words.
  for (std::string cmd : {"1A=x bash run.sh", "A-B=x bash run.sh", "=x bash run.sh"}) {
    auto r = ParseRunScript(cmd, "c.run_script");
    ASSERT_TRUE(r.ok()) << cmd;
    EXPECT_TRUE(r->env.empty()) << cmd;
    EXPECT_EQ(r->argv[0], cmd.substr(0, cmd.find(' '))) << cmd;
  }
  // Shell syntax in the command is still refused; a value with blanks splits into the command.
  for (std::string bad : {"A=1 bash run.sh > log", "B=$(touch /tmp/x) bash run.sh", "A=1\nbash run.sh"}) {
    auto r = ParseRunScript(bad, "c.run_script");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("c.run_script: contains shell syntax"), std::string::npos) << r.status().message();
  }
  auto only = ParseRunScript("A=1 B=2", "c.run_script");
  ASSERT_FALSE(only.ok());
  EXPECT_NE(only.status().message().find("no command"), std::string::npos);
  EXPECT_FALSE(ParseRunScript("  ", "c.run_script").ok());
}

TEST(HuntScript, MapsCodePathIntoTheWorktreeAndSetsSteps) {
  std::vector<std::string> argv = {"bash", "/src/code/run.sh", "--dump.dir=/src/code/dump", "/src/codex/x", "rel/y",
                                   "/src/code", "--other=/tmp/z"};
  auto mapped = MapArgvIntoWorktree(argv, "/src/code", "/wt");
  EXPECT_EQ(mapped, (std::vector<std::string>{"bash", "/wt/run.sh", "--dump.dir=/wt/dump", "/src/codex/x", "rel/y",
                                              "/wt", "--other=/tmp/z"}));
  auto flag = FindStepsFlag({"bash", "r.sh", "--training.steps", "20", "--x"});
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->value, 20);
  EXPECT_EQ(WithSteps({"bash", "r.sh", "--training.steps", "20", "--x"}, *flag, 1),
            (std::vector<std::string>{"bash", "r.sh", "--training.steps", "1", "--x"}));
  flag = FindStepsFlag({"bash", "pretrain.sh", "--train-iters=300"});
  ASSERT_TRUE(flag);
  EXPECT_EQ(WithSteps({"bash", "pretrain.sh", "--train-iters=300"}, *flag, 2)[2], "--train-iters=2");
  EXPECT_FALSE(FindStepsFlag({"bash", "r.sh", "--training.steps", "many"}));
}

TEST(HuntRepo, BaselineLineOfFollowsTheHunks) {
  auto hunk = [](int os, int ol, int ns, int nl) {
    msprobe::Hunk h;
    h.old_start = os, h.old_lines = ol, h.new_start = ns, h.new_lines = nl;
    return h;
  };
  // line 5 replaced, two lines added after old 9 (new 10-11), old 20-21 deleted.
  std::vector<msprobe::Hunk> hunks = {hunk(5, 1, 5, 1), hunk(9, 0, 10, 2), hunk(20, 2, 21, 0)};
  EXPECT_EQ(BaselineLineOf(hunks, 3), 3);
  EXPECT_EQ(BaselineLineOf(hunks, 5), 5);
  EXPECT_EQ(BaselineLineOf(hunks, 10), std::nullopt);
  EXPECT_EQ(BaselineLineOf(hunks, 12), 10);
  EXPECT_EQ(BaselineLineOf(hunks, 21), 19);
  EXPECT_EQ(BaselineLineOf(hunks, 22), 22);
}

TEST(ComparerConfigHunt, RefAndErrorsNameTheJsonPath) {
  json j = json::parse(R"({"baseline": {"code_path": "/r", "run_script": "bash run.sh", "ref": "main"},
                           "test": {"code_path": "/r", "run_script": "bash run.sh"},
                           "msprobe": {"baseline_data_dir": "/b", "test_data_dir": "/t"}})");
  auto c = ParseComparerConfig(j, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->baseline.ref.value_or(""), "main");
  EXPECT_FALSE(c->test.ref);
  j["baseline"]["ref"] = "";
  EXPECT_NE(ParseComparerConfig(j, "config.json").status().message().find("config.json.baseline.ref"), std::string::npos);
  j["baseline"]["ref"] = 3;
  EXPECT_NE(ParseComparerConfig(j, "config.json").status().message().find("config.json.baseline.ref"), std::string::npos);
  j["baseline"]["ref"] = "main";
  j["debug"] = {{"max_iteration", 3}};
  auto typo = ParseComparerConfig(j, "config.json");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("config.json.debug.max_iteration"), std::string::npos) << typo.status().message();
  j["debug"] = {{"trace_threshold", -1}};
  EXPECT_NE(ParseComparerConfig(j, "config.json").status().message().find("config.json.debug.trace_threshold"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::workflow
