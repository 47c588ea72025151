// run_training through its MCP adapter with the real toy trainer: argument errors name
// their JSON path, progress reaches the client, a failed run is an isError result that
// still carries the job, and status/list work by id.
#include "tools/run_training/run_training.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/common/fake_tool_context.h"
#include "tests/run/toy_repo.h"

namespace parity::tools {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class RunTrainingToolTest : public ::testing::Test {
 protected:
  // The stand-in trainings below are `sh -c` commands: this test user's policy allows them.
  RunTrainingToolTest() : ctx_(toy_.report()) {
    policy::Policy p = ctx_.policy();
    p.AddCommand({"sh", "-c", "..."}, "test: the stand-in trainings");
    ctx_.set_policy(std::move(p));
  }
  mcp::ToolResult Call(const json& args) { return MakeRunTrainingTool().handler(args, ctx_); }
  json Base() {
    return {{"worktree", toy_.repo().string()}, {"model", "toy"}, {"config", "toy_small"},
            {"dataset_path", "data/corpus.txt"}, {"probe_env", false}};
  }
  testing::ToyRepo toy_;
  testing::FakeContext ctx_;
};

TEST_F(RunTrainingToolTest, DeclaresTaskSupport) {
  EXPECT_EQ(MakeRunTrainingTool().spec.task_support, mcp::TaskSupport::kOptional);
}

TEST_F(RunTrainingToolTest, ArgumentErrorsNameThePath) {
  json a = Base();
  a["steps"] = "ten";
  EXPECT_THAT(Call(a).structured["error"]["message"].get<std::string>(), HasSubstr("arguments.steps: expected integer"));
  a = Base();
  EXPECT_THAT(Call(a).structured["error"]["message"].get<std::string>(), HasSubstr("arguments.side"));
  a["side"] = "baseline";
  a["config"] = "../escape";
  EXPECT_THAT(Call(a).structured["error"]["message"].get<std::string>(), HasSubstr("arguments.config"));
  a["config"] = "toy_small";
  a["extra_args"] = {"--debug.deterministic_warn_only"};
  auto r = Call(a);
  ASSERT_TRUE(r.is_error);
  EXPECT_THAT(r.structured["error"]["message"].get<std::string>(), HasSubstr("refused"));
  EXPECT_THAT(Call({{"action", "status"}}).structured["error"]["message"].get<std::string>(), HasSubstr("arguments.job_id"));
  EXPECT_EQ(Call({{"action", "status"}, {"job_id", "nope"}}).structured["error"]["kind"], "not found");
}

TEST_F(RunTrainingToolTest, GenCkptThenTrainWithProgressAndFingerprint) {
  json gen = Base();
  gen["phase"] = "gen_ckpt";
  gen["probe_env"] = true;
  auto g = Call(gen);
  ASSERT_FALSE(g.is_error) << g.content.dump();
  EXPECT_EQ(g.structured["job"]["status"], "ok");
  EXPECT_EQ(g.structured["environment"]["sha256"].get<std::string>().size(), 64u);

  json train = Base();
  train["side"] = "baseline";
  train["steps"] = 4;
  auto t = Call(train);
  ASSERT_FALSE(t.is_error) << t.content.dump();
  const json& job = t.structured["job"];
  EXPECT_EQ(job["status"], "ok");
  EXPECT_EQ(job["log"], "baseline_toy_small_train.log");
  EXPECT_EQ(job["command"]["argv"][7], "--debug.seed=42");
  auto progress = ctx_.progress();
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().done, 4);
  EXPECT_EQ(progress.back().total, 4);

  auto status = Call({{"action", "status"}, {"job_id", job["id"]}});
  EXPECT_EQ(status.structured["job"]["status"], "ok");
  auto list = Call({{"action", "list"}});
  EXPECT_EQ(list.structured["jobs"].size(), 2u);
}

TEST_F(RunTrainingToolTest, FailedRunIsAnErrorWithTheJob) {
  json a = Base();
  a["side"] = "candidate";
  a["launcher"] = "argv";
  a["argv"] = {"sh", "-c", "echo 'Traceback (most recent call last):'; echo 'RuntimeError: boom'; exit 1"};
  auto r = Call(a);
  ASSERT_TRUE(r.is_error);
  EXPECT_EQ(r.structured["job"]["status"], "failed");
  EXPECT_EQ(r.structured["job"]["exit_code"], 1);
  std::string text = r.content[0]["text"].get<std::string>();
  EXPECT_THAT(text, HasSubstr("exit code 1"));
  EXPECT_THAT(text, HasSubstr("RuntimeError: boom"));
}

TEST_F(RunTrainingToolTest, StartWithoutWaitReturnsAtOnceThenWaitFinishes) {
  json a = Base();
  a["side"] = "candidate";
  a["launcher"] = "argv";
  a["argv"] = {"sh", "-c", "sleep 1; echo 'step:  1  loss:  1.0'"};
  a["wait"] = false;
  auto r = Call(a);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["job"]["status"], "running");
  auto w = Call({{"action", "wait"}, {"job_id", r.structured["job"]["id"]}});
  ASSERT_FALSE(w.is_error) << w.content.dump();
  EXPECT_EQ(w.structured["job"]["status"], "ok");
}

// The attack through the tool itself: a command outside the policy runs only on the
// user's yes, and a worktree outside the folders is refused, asked of no one.
TEST_F(RunTrainingToolTest, CommandsOutsideThePolicyRunOnlyWhenTheUserAccepts) {
  namespace fs = std::filesystem;
  fs::path marker = toy_.repo() / "touched";
  json a = Base();
  a["side"] = "candidate";
  a["launcher"] = "argv";
  a["argv"] = {"touch", marker.string()};
  auto refused = Call(a);
  ASSERT_TRUE(refused.is_error);
  EXPECT_THAT(refused.content.dump(), HasSubstr("cannot ask the user"));
  EXPECT_THAT(refused.structured.dump(), HasSubstr("policy_line"));
  EXPECT_THAT(refused.structured.dump(), HasSubstr("commands"));
  ctx_.answer_user(mcp::ElicitAnswer::Action::kDecline);
  EXPECT_TRUE(Call(a).is_error);
  EXPECT_FALSE(fs::exists(marker));
  ASSERT_EQ(ctx_.asked().size(), 1u);
  EXPECT_THAT(ctx_.asked()[0], HasSubstr("command: touch " + marker.string()));
  EXPECT_THAT(ctx_.asked()[0], HasSubstr("in folder: " + toy_.repo().string()));
  ctx_.answer_user(mcp::ElicitAnswer::Action::kAccept);
  auto accepted = Call(a);
  EXPECT_TRUE(fs::exists(marker)) << accepted.content.dump();
  a["worktree"] = "/";
  size_t asked = ctx_.asked().size();
  auto outside = Call(a);
  ASSERT_TRUE(outside.is_error);
  EXPECT_THAT(outside.content.dump(), HasSubstr("outside the folders"));
  EXPECT_EQ(ctx_.asked().size(), asked);
}

}  // namespace
}  // namespace parity::tools
