#include "domain/inject/inject.h"

#include <gtest/gtest.h>

#include "tests/common/fake_tool_context.h"
#include "tests/inject/inject_fixture.h"
#include "tools/inject_prints/inject_prints.h"

namespace parity::inject {
namespace {

TEST_F(InjectTest, RefusesTheUsersOwnTree) {
  Options o = Opts({{"pkg/model.py", 18, std::nullopt, false}});
  o.worktree = repo_;
  auto r = Inject(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("not a parity worktree"), std::string::npos) << r.status().message();
  EXPECT_EQ(ReadAll(repo_ / "pkg/model.py"), kModel);
}

TEST_F(InjectTest, AnalysesStatementsAndFunctionsWithPythonAst) {
  auto a = Analyze(Opts({{"pkg/model.py", 18, std::nullopt, false}, {"pkg/model.py", std::nullopt, "scale", false}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const json& line = (*a)["targets"][0]["analysis"];
  EXPECT_EQ(line["statement"], "Assign");
  EXPECT_EQ(line["inputs"], json({"x", "self.approximate"}));
  EXPECT_EQ(line["outputs"], json({"h"}));
  const json& fn = (*a)["targets"][1]["analysis"];
  EXPECT_EQ(fn["params"], json({"x", "factor"}));
  EXPECT_EQ(fn["returns"].size(), 1u);
  EXPECT_EQ((*a)["analyser"], "python-ast");
  auto missing = Analyze(Opts({{"pkg/model.py", std::nullopt, "nope", false}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no function nope"), std::string::npos);
}

TEST_F(InjectTest, InjectedProbesRunUnderTorchAndRevertRestoresBytes) {
  auto injected = Inject(Opts({{"pkg/model.py", 18, std::nullopt, false},
                               {"pkg/model.py", 19, std::nullopt, true},
                               {"pkg/model.py", std::nullopt, "scale", false}}));
  ASSERT_TRUE(injected.ok()) << injected.status().ToString();
  std::string changed = ReadAll(worktree_ / "pkg/model.py");
  EXPECT_NE(changed, original_);
  EXPECT_EQ(std::count(changed.begin(), changed.end(), '\n') -
                std::count(original_.begin(), original_.end(), '\n'),
            1 + 2 + 1 + 1 + 2);  // import, 2 before, 1 after, 1 entry (x), 2 entry (x, factor)
  EXPECT_TRUE(fs::exists(worktree_ / "_parity_probe.py"));

  auto status = InjectStatus(worktree_);
  ASSERT_TRUE(status.ok());
  EXPECT_TRUE((*status)["injected"].get<bool>());
  EXPECT_EQ((*status)["files"][0]["state"], "injected");
  EXPECT_FALSE(Inject(Opts({{"pkg/model.py", 18, std::nullopt, false}})).ok());  // already injected

  ProcessResult run = RunCmd({"/usr/bin/python3", "pkg/model.py"}, worktree_);
  ASSERT_TRUE(run.success()) << run.err << run.out;
  EXPECT_NE(run.out.find("done"), std::string::npos);
  std::vector<json> probes;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("PARITY_PROBE ", 0) == 0) {
      json record = json::parse(line.substr(13), nullptr, false);
      ASSERT_TRUE(record.is_object()) << line;
      probes.push_back(record);
    }
  }
  // First call only (the default): no probe line has call 2.
  bool saw_tensor = false, saw_string = false, saw_return_tuple = false;
  for (const json& p : probes) {
    EXPECT_EQ(p["call"], 1) << p.dump();
    if (p["name"] == "x" && p["when"] == "before") {
      saw_tensor = true;
      EXPECT_EQ(p["shape"], json({2, 4}));
      EXPECT_EQ(p["dtype"], "torch.float32");
      EXPECT_EQ(p["device"], "cpu");
      EXPECT_EQ(p["hash"].get<std::string>().size(), 64u);
      EXPECT_DOUBLE_EQ(p["sum"].get<double>(), 8.0);
      EXPECT_DOUBLE_EQ(p["max"].get<double>(), 1.0);
      EXPECT_EQ(p["site"], "pkg/model.py:18");
    }
    if (p["name"] == "self.approximate") {
      saw_string = true;
      EXPECT_EQ(p["type"], "str");
      EXPECT_EQ(p["value"], "'tanh'");
    }
    if (p["when"] == "return" && p["type"] == "tuple") saw_return_tuple = true;
  }
  EXPECT_TRUE(saw_tensor);
  EXPECT_TRUE(saw_string);
  EXPECT_TRUE(saw_return_tuple);

  auto reverted = Revert(worktree_, false);
  ASSERT_TRUE(reverted.ok()) << reverted.status().ToString();
  EXPECT_TRUE((*reverted)["reverted"].get<bool>());
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  EXPECT_EQ(Sha256Hex(ReadAll(worktree_ / "pkg/model.py")), Sha256Hex(kModel));
  EXPECT_FALSE(fs::exists(worktree_ / "_parity_probe.py"));
  EXPECT_FALSE(fs::exists(worktree_ / ".parity_inject"));
  ProcessResult git_status = RunCmd({"git", "status", "--porcelain", "--untracked-files=all"}, worktree_);
  // Python may leave __pycache__ behind; nothing else.
  std::istringstream st(git_status.out);
  for (std::string line; std::getline(st, line);) EXPECT_NE(line.find("__pycache__"), std::string::npos) << line;
}

// A comprehension's variable does not exist before the statement: probing it would raise
// NameError in the training.
TEST_F(InjectTest, ComprehensionVariablesAreNotInputs) {
  std::ofstream(worktree_ / "pkg/extra.py", std::ios::binary)
      << "import torch\nbatch = {'items': [torch.ones(2), torch.zeros(2)]}\n"
         "ys = [v * 2 for v in batch['items'] if v.sum() > 0]\nprint('ok', len(ys))\n";
  auto a = Analyze(Opts({{"pkg/extra.py", 3, std::nullopt, false}}));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)["targets"][0]["analysis"]["inputs"], json({"batch"}));
  EXPECT_EQ((*a)["targets"][0]["analysis"]["candidates"]["reads"], json({"batch['items']", "batch"}));
  ASSERT_TRUE(Inject(Opts({{"pkg/extra.py", 3, std::nullopt, false}})).ok());
  ProcessResult run = RunCmd({"/usr/bin/python3", "pkg/extra.py"}, worktree_);
  EXPECT_TRUE(run.success()) << run.err;
  std::vector<std::string> top;  // the probed values themselves, not their elements
  for (const json& p : ProbeLines(run.out)) {
    if (p["name"].get<std::string>().find('[') == std::string::npos) top.push_back(p["when"].get<std::string>() + " " + p["name"].get<std::string>());
  }
  EXPECT_EQ(top, (std::vector<std::string>{"before batch", "after ys"})) << run.out;
  ASSERT_TRUE(Revert(worktree_, false).ok());
}

TEST_F(InjectTest, RefusesWhenTheFileChangedSinceAnalysisOrTheLineIsMissing) {
  Options o = Opts({{"pkg/model.py", 18, std::nullopt, false}});
  o.expected_sha256["pkg/model.py"] = Sha256Hex("something else");
  auto stale = Inject(o);
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find("changed since it was analysed"), std::string::npos);
  auto missing = Inject(Opts({{"pkg/model.py", 999, std::nullopt, false}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  EXPECT_FALSE(fs::exists(worktree_ / "_parity_probe.py"));
}

TEST_F(InjectTest, RevertRefusesToDiscardLaterEditsUnlessForced) {
  ASSERT_TRUE(Inject(Opts({{"pkg/model.py", 18, std::nullopt, false}})).ok());
  std::ofstream(worktree_ / "pkg/model.py", std::ios::app) << "# a later edit\n";
  auto refused = Revert(worktree_, false);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("changed after the probes were injected"), std::string::npos);
  auto forced = Revert(worktree_, true);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
}

TEST_F(InjectTest, ToolInstrumentsTheUserFramesOfAHuntAndReverts) {
  // A hunt.json as msprobe_first_diff writes it, with the frames recorded on a training host.
  json hunt = {{"schema", "parity.hunt/1"},
               {"first_divergence",
                {{"api", "Functional.gelu.0.forward"},
                 {"stack", json::array({{{"file", "/usr/lib/python3/dist-packages/torch/nn/functional.py"}, {"line", 1},
                                         {"function", "gelu"}, {"code", ""}, {"user", false}},
                                        {{"file", "/home/ma-user/work/toy/pkg/model.py"}, {"line", 18},
                                         {"function", "forward"}, {"code", "h = F.gelu(self.fc1(x), approximate=self.approximate)"},
                                         {"user", true}}})}}}};
  std::ofstream(root_ / "hunt.json") << hunt.dump();
  parity::testing::FakeContext ctx(root_ / "report");
  auto tool = tools::MakeInjectPrintsTool();
  unsetenv("DEEPSEEK_API_KEY");
  auto refused = tool.handler(json{{"action", "analyze"}, {"worktree", worktree_.string()}, {"analyser", "deepseek"},
                                   {"targets", json::array({{{"file", "pkg/model.py"}, {"line", 18}}})}},
                              ctx);
  EXPECT_TRUE(refused.is_error);
  EXPECT_NE(refused.content.dump().find("needs the environment variable DEEPSEEK_API_KEY"), std::string::npos)
      << refused.content.dump();
  auto bad = tool.handler(json{{"action", "inject"}, {"worktree", worktree_.string()},
                               {"targets", json::array({{{"file", "pkg/model.py"}}})}},
                          ctx);
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(bad.content.dump().find("arguments.targets[0]"), std::string::npos) << bad.content.dump();

  auto injected = tool.handler(
      json{{"action", "inject"}, {"worktree", worktree_.string()}, {"hunt_json", (root_ / "hunt.json").string()}}, ctx);
  ASSERT_FALSE(injected.is_error) << injected.content.dump();
  EXPECT_EQ(injected.structured["probes"].size(), 2u);  // forward: x at entry, the return value
  auto status = tool.handler(json{{"action", "status"}, {"worktree", worktree_.string()}}, ctx);
  EXPECT_TRUE(status.structured["injected"].get<bool>());
  auto reverted = tool.handler(json{{"action", "revert"}, {"worktree", worktree_.string()}}, ctx);
  ASSERT_FALSE(reverted.is_error) << reverted.content.dump();
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  EXPECT_TRUE(fs::exists(root_ / "report/manifest.json"));
}

}  // namespace
}  // namespace parity::inject
