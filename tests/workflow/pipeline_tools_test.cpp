// The premerge and hunt MCP tools through their handlers, on the demo repository
// (examples/make-demo-repo) with the real toy trainer. Decided by hand before running:
//  - argument errors name their JSON path;
//  - the config file, its repo and its report directory are judged by the user's policy:
//    outside the folders they are refused, naming which;
//  - the file's confirm.classes is the caller's: with no way to ask the user the premerge
//    stops at audit_workspace prepare, refused, with no worktree made and nothing trained;
//  - with the user's answer the same call runs to the verdict: numerics/gelu-tanh FAILs on
//    toy_small (GELU's tanh approximation moves the loss at step 1), the user was asked the
//    classes once, and the pipeline's steps came as increasing progress;
//  - a hunt config with a literal SSH password is refused before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/common/fake_tool_context.h"
#include "tests/common/temp_dir.h"
#include "tools/hunt/hunt.h"
#include "tools/premerge/premerge.h"

namespace parity::tools {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;

std::string Shell(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string ErrorOf(const mcp::ToolResult& r) {
  if (!r.is_error) return "(not an error: " + r.content.dump() + ")";
  return r.structured["error"].value("message", "") + " | " + r.structured["error"].value("hint", "");
}

class PipelineToolsTest : public ::testing::Test {
 protected:
  PipelineToolsTest() : ctx_(dir_.path() / "reports") {
    Shell("'" PARITY_SOURCE_DIR "/examples/make-demo-repo' '" + (dir_.path() / "demo").string() + "' --steps 2 2>&1");
  }
  fs::path repo() const { return dir_.path() / "demo" / "toy-trainer"; }
  fs::path WriteConfig(const json& config, const std::string& name = "premerge.json") {
    fs::path path = dir_.path() / name;
    std::ofstream(path) << config.dump(2);
    return path;
  }
  json Premerge(int steps) const {
    return {{"repo", repo().string()}, {"report_dir", (dir_.path() / "reports").string()}, {"baseline", "main"},
            {"candidate", "numerics/gelu-tanh"}, {"model", "toy"}, {"configs", {"toy_small"}}, {"steps", steps},
            {"dataset_path", "data/corpus.txt"}, {"compare", {{"preset", "premerge"}, {"tolerance_abs", 0}}},
            {"cache", {{"enabled", false}}},
            {"confirm", {{"classes", "proposed"}, {"environment_anomalies", true}}}};
  }
  size_t Worktrees() const {
    std::string list = Shell("git -C '" + repo().string() + "' worktree list --porcelain");
    size_t n = 0;
    for (size_t at = list.find("worktree "); at != std::string::npos; at = list.find("worktree ", at + 1)) ++n;
    return n;
  }
  testing_support::TempDir dir_{"parity-pipeline-tools"};
  testing::FakeContext ctx_;
};

TEST_F(PipelineToolsTest, BothMayRunAsTasks) {
  EXPECT_EQ(MakePremergeTool().spec.task_support, mcp::TaskSupport::kOptional);
  EXPECT_EQ(MakeHuntTool().spec.task_support, mcp::TaskSupport::kOptional);
}

TEST_F(PipelineToolsTest, ArgumentErrorsNameThePath) {
  auto premerge = MakePremergeTool().handler;
  EXPECT_THAT(ErrorOf(premerge(json::object(), ctx_)), HasSubstr("arguments.config"));
  EXPECT_THAT(ErrorOf(premerge({{"config", "x.json"}, {"steps", 0}}, ctx_)), HasSubstr("arguments.steps"));
  EXPECT_THAT(ErrorOf(premerge({{"config", "x.json"}, {"stepz", 3}}, ctx_)), HasSubstr("stepz"));
  auto hunt = MakeHuntTool().handler;
  EXPECT_THAT(ErrorOf(hunt({{"config", "c.json"}, {"language", "fr"}}, ctx_)), HasSubstr("arguments.language"));
  EXPECT_THAT(ErrorOf(hunt({{"config", "c.json"}, {"max_iterations", 0}}, ctx_)), HasSubstr("arguments.max_iterations"));
}

TEST_F(PipelineToolsTest, TheConfigAndItsFoldersAreJudgedByThePolicy) {
  fs::path config = WriteConfig(Premerge(2));
  ctx_.set_policy(policy::Policy{});  // built-in rules: no folder at all
  auto r = MakePremergeTool().handler({{"config", config.string()}}, ctx_);
  EXPECT_THAT(ErrorOf(r), HasSubstr("refused by the user's policy: arguments.config"));

  // The config's own folder allowed, its repository not.
  testing_support::TempDir other("parity-pipeline-config");
  fs::path elsewhere = other.path() / "premerge.json";
  std::ofstream(elsewhere) << Premerge(2).dump();
  policy::Policy p;
  p.AddFolder(other.path(), true, "test");
  ctx_.set_policy(p);
  r = MakePremergeTool().handler({{"config", elsewhere.string()}}, ctx_);
  EXPECT_THAT(ErrorOf(r), HasSubstr(": repo"));
  EXPECT_EQ(Worktrees(), 1u);
}

TEST_F(PipelineToolsTest, TheCallersConfirmDoesNotConfirmTheClasses) {
  fs::path config = WriteConfig(Premerge(2));
  auto r = MakePremergeTool().handler({{"config", config.string()}}, ctx_);
  EXPECT_THAT(ErrorOf(r), HasSubstr("must be confirmed by the user"));
  EXPECT_EQ(Worktrees(), 1u) << "no worktree may be made";
  EXPECT_FALSE(fs::exists(dir_.path() / "reports" / "jobs")) << "nothing may be trained";
}

TEST_F(PipelineToolsTest, WithTheUsersAnswerItRunsToTheVerdict) {
  const std::string status_before = Shell("git -C '" + repo().string() + "' status --porcelain");
  fs::path config = WriteConfig(Premerge(2));
  ctx_.answer_user(mcp::ElicitAnswer::Action::kAccept);
  auto r = MakePremergeTool().handler({{"config", config.string()}}, ctx_);
  ASSERT_FALSE(r.is_error) << r.content.dump(2);
  EXPECT_EQ(r.structured["verdict"], "FAIL") << r.structured.dump(2);
  ASSERT_EQ(r.structured["cases"].size(), 1u);
  EXPECT_EQ(r.structured["cases"][0]["config"], "toy_small");
  EXPECT_EQ(r.structured["cases"][0]["verdict"], "FAIL");
  EXPECT_TRUE(fs::exists(r.structured["outputs"].value("html", "")));
  auto asked = ctx_.asked();
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_THAT(asked[0], HasSubstr("class of each changed file"));
  auto progress = ctx_.progress();
  ASSERT_FALSE(progress.empty());
  bool steps = false;
  for (size_t i = 0; i < progress.size(); ++i) {
    if (i) EXPECT_GT(progress[i].done, progress[i - 1].done);
    steps = steps || progress[i].message.rfind("step ", 0) == 0;
  }
  EXPECT_TRUE(steps) << "no pipeline step in the progress";
  EXPECT_EQ(Worktrees(), 1u) << "the worktrees are removed at the end";
  EXPECT_EQ(Shell("git -C '" + repo().string() + "' status --porcelain"), status_before);
}

TEST_F(PipelineToolsTest, AHuntConfigsLiteralPasswordIsRefused) {
  const std::string script = "bash scripts/run_train.sh --module toy --config toy_small --training.steps 2";
  json config = {
      {"baseline", {{"mode", "local"}, {"code_path", repo().string()}, {"run_script", script}}},
      {"test", {{"mode", "remote"}, {"code_path", "/srv/toy"}, {"run_script", script},
                {"ssh", {{"host", "127.0.0.1"}, {"username", "u"}, {"port", 22}, {"password", "hunter2"}}}}},
      {"msprobe", {{"baseline_data_dir", (dir_.path() / "b").string()}, {"test_data_dir", (dir_.path() / "t").string()}}},
      {"debug", {{"max_iterations", 2}, {"tolerance", 0}}}};
  fs::path path = WriteConfig(config, "config.json");
  auto r = MakeHuntTool().handler({{"config", path.string()}, {"report_dir", (dir_.path() / "hunt").string()}}, ctx_);
  EXPECT_THAT(ErrorOf(r), HasSubstr("test.ssh.password"));
  EXPECT_THAT(ErrorOf(r), Not(HasSubstr("hunter2")));
  EXPECT_FALSE(fs::exists(dir_.path() / "hunt"));
}

}  // namespace
}  // namespace parity::tools
