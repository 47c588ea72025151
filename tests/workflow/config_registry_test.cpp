// The registries a commit holds (config_registry.h), read through git from real repositories
// in the layouts the trainers use, and the names a command chooses checked against them
// (config_names.h). Every expected list below is written from the files' text by hand.
#include <gtest/gtest.h>

#include "domain/workflow/config_names.h"
#include "domain/workflow/config_registry.h"
#include "tests/common/git_cli.h"
#include "tests/common/temp_dir.h"

namespace parity::workflow {
namespace {

namespace fs = std::filesystem;
using testing_support::Git;
using testing_support::TempDir;
constexpr auto& Write = testing_support::WriteFile;
using Names = std::vector<std::string>;

// torchtitan 0.2.x: TOML job files, flavors in a python dict named by the model's TrainSpec.
void TorchtitanV02(const fs::path& repo) {
  Write(repo / "torchtitan/models/llama3/train_configs/debug_model.toml",
        "[job]\ndump_folder = \"./outputs\"\n\n[model]\nname = \"llama3\"\nflavor = \"debugmodel\"\n");
  Write(repo / "torchtitan/models/llama3/train_configs/llama3_8b.toml", "# [model]\n[model]\n  name = 'llama3'\n");
  Write(repo / "torchtitan/models/llama3/__init__.py",
        "from .model import TransformerModelArgs\n\n"
        "__all__ = [\"llama3_configs\"]\n\n"
        "llama3_configs = {\n"
        "    \"debugmodel\": TransformerModelArgs(dim=256, n_layers=8),\n"
        "    # \"commented\": TransformerModelArgs(),\n"
        "    \"8B\": TransformerModelArgs(\n        dim=4096,\n    ),\n"
        "}\n\n"
        "register_train_spec(\n    TrainSpec(\n        name=\"llama3\",\n        model_args=llama3_configs,\n"
        "        build_loss_fn=build_cross_entropy_loss,\n    )\n)\n");
  Write(repo / "torchtitan/models/llama3/model/args.py",
        "class TransformerModelArgs:\n    defaults = {\"not\": 1}\n");
  Write(repo / "torchtitan/models/deepseek_v3/__init__.py",
        "deepseekv3_args: dict[str, DeepSeekV3ModelArgs] = {\n    \"debugmodel\": A(),\n    \"16B\": A(),\n}\n"
        "deepseekv3_args[\"671B\"] = A()\n");
  Write(repo / "run_train.sh", "CONFIG_FILE=${CONFIG_FILE:-\"./torchtitan/models/llama3/train_configs/debug_model.toml\"}\n");
}

class Registry : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() / "repo";
    fs::create_directories(repo_);
    Git(repo_, {"init", "-q", "-b", "main"});
  }
  std::string Commit(const std::string& message) {
    Git(repo_, {"add", "-A"});
    Git(repo_, {"commit", "-q", "-m", message});
    return Git(repo_, {"rev-parse", "HEAD"});
  }
  TreeRegistry Read(const std::string& commit) {
    auto r = ReadTreeRegistry(repo_, commit);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : TreeRegistry{};
  }
  TempDir dir_;
  fs::path repo_;
};

TEST_F(Registry, TorchtitanTomlFilesAndFlavorDicts) {
  TorchtitanV02(repo_);
  TreeRegistry r = Read(Commit("v0.2"));
  EXPECT_EQ(r.Models(), (Names{"deepseek_v3", "llama3"}));
  // TOML stems (configs of the model their [model] name says) and the dict's keys (flavors).
  EXPECT_EQ(r.configs.at("llama3"), (Names{"debug_model", "llama3_8b", "debugmodel", "8B"}));
  // A dict named by no TrainSpec belongs to the models/<M>/ folder it is in; a key added by
  // subscript counts; an annotated assignment is still an assignment.
  EXPECT_EQ(r.configs.at("deepseek_v3"), (Names{"debugmodel", "16B", "671B"}));
  EXPECT_EQ(r.configs.count("TransformerModelArgs"), 0u);
  EXPECT_TRUE(r.paths.count("torchtitan/models/llama3/train_configs/debug_model.toml"));
  EXPECT_TRUE(r.paths.count("run_train.sh"));
}

TEST_F(Registry, ModelNamesGivenByAMappingDictAcrossFiles) {
  // torchtitan 0.1: models/llama/__init__.py holds the flavors, models/__init__.py names them.
  Write(repo_ / "torchtitan/models/llama/__init__.py",
        "llama3_configs = {\n    'debugmodel': ModelArgs(dim=256),\n    '8B': ModelArgs(dim=4096),\n}\n");
  Write(repo_ / "torchtitan/models/__init__.py",
        "from torchtitan.models.llama import llama3_configs\n\nmodels_config = {\n    \"llama3\": llama3_configs,\n}\n"
        "model_name_to_tokenizer = {\"llama3\": \"tiktoken\"}\n");
  TreeRegistry r = Read(Commit("v0.1"));
  EXPECT_EQ(r.Models(), (Names{"llama3"})) << "the dict is given to llama3, not to the folder llama";
  EXPECT_EQ(r.configs.at("llama3"), (Names{"debugmodel", "8B"}));
}

TEST_F(Registry, ConfigRegistryFunctionsAndTheToyTable) {
  Write(repo_ / "torchtitan_npu/models/deepseek_v32/config_registry.py",
        "def deepseek_v32_671b_debug() -> JobConfig:\n    return JobConfig()\n\n\ndef _private():\n    pass\n\n"
        "@register\ndef deepseek_v32_671b():\n    def inner():\n        pass\n");
  Write(repo_ / "toy_trainer/config_registry.py",
        "MODULES = {\"toy\": {\"toy_small\": _toy_small, 'toy_tp2': _toy_tp2}}  # {\"no\": {\"x\": 1}}\n");
  TreeRegistry r = Read(Commit("registries"));
  EXPECT_EQ(r.configs.at("deepseek_v32"), (Names{"deepseek_v32_671b_debug", "deepseek_v32_671b"}));
  EXPECT_EQ(r.configs.at("toy"), (Names{"toy_small", "toy_tp2"}));
  EXPECT_EQ(r.configs.count("no"), 0u);
  // In the tree's order (git sorts entries by name).
  EXPECT_EQ(r.sources, (Names{"torchtitan_npu/models/deepseek_v32/config_registry.py", "toy_trainer/config_registry.py"}));
}

TEST_F(Registry, EachCommitIsReadAsCommittedNeverTheWorkingTree) {
  Write(repo_ / "toy_trainer/config_registry.py", "MODULES = {\"toy\": {\"toy_small\": f}}\n");
  std::string first = Commit("one");
  Write(repo_ / "toy_trainer/config_registry.py", "MODULES = {\"toy\": {\"toy_small\": f, \"toy_new\": g}}\n");
  std::string second = Commit("two");
  // Uncommitted: a third config in the working tree, seen by neither commit.
  Write(repo_ / "toy_trainer/config_registry.py", "MODULES = {\"toy\": {\"toy_small\": f, \"toy_new\": g, \"wt\": h}}\n");
  EXPECT_EQ(Read(first).configs.at("toy"), (Names{"toy_small"}));
  EXPECT_EQ(Read(second).configs.at("toy"), (Names{"toy_small", "toy_new"}));
  EXPECT_FALSE(ReadTreeRegistry(repo_, "no-such-ref").ok());
}

TEST_F(Registry, NamesAreCheckedAndATypoListsWhatIsRegistered) {
  TorchtitanV02(repo_);
  TreeRegistry r = Read(Commit("v0.2"));
  auto names = NamesInCommand({"bash", "run_train.sh", "--model.name=llama3", "--model.flavor", "8B"}, {});
  EXPECT_EQ(names.model.value_or(""), "llama3");
  EXPECT_EQ(names.config.value_or(""), "8B");
  EXPECT_TRUE(CheckNames(names, "w", r, "the test commit abc").ok());

  names.config = "8b";
  Status typo = CheckNames(names, "config.json.test.run_script", r, "the test commit abc");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(typo.message(), "config.json.test.run_script: the config \"8b\" of the model llama3 is not registered in "
                            "the test commit abc");
  EXPECT_NE(typo.hint().find("registered for llama3: debug_model, llama3_8b, debugmodel, 8B"), std::string::npos)
      << typo.hint();
  EXPECT_FALSE(IsNoRegistry(typo));

  names = NamesInCommand({"bash", "run_train.sh", "--module", "llama4"}, {});
  Status model = CheckNames(names, "w", r, "c");
  EXPECT_NE(model.message().find("the model \"llama4\" is not registered"), std::string::npos) << model.message();

  // The job file: CONFIG_FILE= or --job.config_file, relative to the run folder (the tree's root).
  names = NamesInCommand({"bash", "run_train.sh"}, {{"CONFIG_FILE", "./torchtitan/models/llama3/train_configs/debug_model.toml"}});
  EXPECT_TRUE(CheckNames(names, "w", r, "c").ok());
  names = NamesInCommand({"bash", "run_train.sh", "--job.config_file=torchtitan/models/llama3/train_configs/dbg.toml"}, {});
  Status file = CheckNames(names, "w", r, "c");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.message().find("the job config file torchtitan/models/llama3/train_configs/dbg.toml is not in c"),
            std::string::npos);
  EXPECT_NE(file.hint().find("debug_model.toml"), std::string::npos) << file.hint();
}

TEST_F(Registry, NoRegistryIsSaidAndLeftToTheUser) {
  Write(repo_ / "train.py", "import argparse\n");
  TreeRegistry r = Read(Commit("plain"));
  EXPECT_TRUE(r.empty());
  Status unknown = CheckNames(NamesInCommand({"python", "train.py", "--config", "big"}, {}), "w", r, "the baseline x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(IsNoRegistry(unknown));
  EXPECT_NE(unknown.message().find("found no registry"), std::string::npos);
  EXPECT_TRUE(CheckNames(NamesInCommand({"python", "train.py"}, {}), "w", r, "x").ok()) << "nothing chosen, nothing to check";
}

}  // namespace
}  // namespace parity::workflow
