// The presets build the skill's command lines exactly; traps are refused up front.
#include "domain/run/launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity::run {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Args = std::vector<std::string>;

LaunchRequest Titan(const std::string& phase) {
  LaunchRequest r;
  r.phase = phase;
  r.model = "llama3";
  r.config = "llama3_debugmodel";
  r.dataset_path = "/data/c4";
  r.steps = 100;
  r.checkpoint_dir = "/repo/numerical_report/initial_ckpt_llama3_debugmodel";
  return r;
}

TEST(Launch, TorchtitanInitialCheckpointIsSkillB1) {
  auto l = BuildLaunch(Titan("gen_ckpt"));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->argv, (Args{"bash", "scripts/run_train.sh", "--module", "llama3", "--config", "llama3_debugmodel",
                           "--training.steps", "1", "--debug.seed=42", "--debug.deterministic",
                           "--training.dataset_path=/data/c4", "--checkpoint.enable", "--checkpoint.last_save_in_hf",
                           "--checkpoint.last_save_model_only"}));
  EXPECT_EQ(l->expected_steps, 1);
  EXPECT_EQ(l->checkpoint_to_move, "outputs/checkpoint/step-1");
}

TEST(Launch, TorchtitanTrainIsSkillB2) {
  LaunchRequest r = Titan("train");
  r.extra_args = {"--parallelism.tensor_parallel_degree=2"};
  auto l = BuildLaunch(r);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->argv,
            (Args{"bash", "scripts/run_train.sh", "--module", "llama3", "--config", "llama3_debugmodel",
                  "--training.steps=100", "--debug.seed=42", "--debug.deterministic", "--training.dataset_path=/data/c4",
                  "--checkpoint.enable", "--checkpoint.load_only", "--checkpoint.initial_load_path",
                  "/repo/numerical_report/initial_ckpt_llama3_debugmodel", "--checkpoint.initial_load_in_hf",
                  "--parallelism.tensor_parallel_degree=2"}));
  EXPECT_EQ(l->expected_steps, 100);
  EXPECT_FALSE(l->checkpoint_to_move.has_value());
}

TEST(Launch, WarnOnlyIsRefusedWithTheReason) {
  LaunchRequest r = Titan("train");
  r.extra_args = {"--debug.deterministic_warn_only"};
  auto l = BuildLaunch(r);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(), HasSubstr("arguments.extra_args[0]"));
  EXPECT_THAT(l.status().hint(), HasSubstr("differ"));
  r.launcher = "argv";
  r.extra_args = {};
  r.argv = {"python", "train.py", "--debug.deterministic_warn_only=true"};
  EXPECT_FALSE(BuildLaunch(r).ok());
}

TEST(Launch, NoneValueIsRefused) {
  LaunchRequest r = Titan("train");
  r.extra_args = {"--checkpoint.initial_load_path", "None"};
  auto l = BuildLaunch(r);
  ASSERT_FALSE(l.ok());
  EXPECT_THAT(l.status().message(), HasSubstr("string \"None\""));
  r.extra_args = {"--checkpoint.initial_load_path=None"};
  EXPECT_FALSE(BuildLaunch(r).ok());
}

TEST(Launch, CustomTemplateFillsWordsWithoutSplittingValues) {
  LaunchRequest r;
  r.launcher = "custom";
  r.custom_template = "bash train.sh --steps={steps} --seed {seed} --data {dataset_path} --tag {side}-{config}";
  r.steps = 7;
  r.side = "baseline";
  r.config = "tp2";
  r.dataset_path = "/data/with space; rm -rf /";
  auto l = BuildLaunch(r);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_THAT(l->argv, ElementsAre("bash", "train.sh", "--steps=7", "--seed", "42", "--data",
                                   "/data/with space; rm -rf /", "--tag", "baseline-tp2"));
  EXPECT_EQ(l->expected_steps, 7);
  r.custom_template = "bash train.sh {nope}";
  auto bad = BuildLaunch(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown placeholder {nope}"));
  r.custom_template = "bash train.sh {checkpoint_dir}";
  EXPECT_THAT(BuildLaunch(r).status().message(), HasSubstr("no value"));
}

TEST(Launch, MegatronPresetSavesAndLoads) {
  LaunchRequest r;
  r.launcher = "megatron";
  r.script = "examples/gpt3/train_gpt3_175b_distributed.sh";
  r.phase = "gen_ckpt";
  r.checkpoint_dir = "/ckpt/init";
  auto g = BuildLaunch(r);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->argv, (Args{"bash", "examples/gpt3/train_gpt3_175b_distributed.sh", "--train-iters", "1", "--seed", "42",
                           "--deterministic-mode", "--save", "/ckpt/init", "--save-interval", "1"}));
  r.phase = "train";
  r.steps = 50;
  auto t = BuildLaunch(r);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->argv, (Args{"bash", "examples/gpt3/train_gpt3_175b_distributed.sh", "--train-iters", "50", "--seed", "42",
                           "--deterministic-mode", "--load", "/ckpt/init", "--finetune", "--no-load-optim",
                           "--no-load-rng"}));
  r.script.clear();
  EXPECT_THAT(BuildLaunch(r).status().message(), HasSubstr("arguments.script"));
}

TEST(Launch, RequiredFieldsAreNamed) {
  LaunchRequest r;
  r.config = "c";
  EXPECT_THAT(BuildLaunch(r).status().message(), HasSubstr("arguments.model"));
  r.launcher = "slurm";
  EXPECT_THAT(BuildLaunch(r).status().message(), HasSubstr("arguments.launcher"));
}

}  // namespace
}  // namespace parity::run
