// domain/workflow on real files and real git repositories: the repository catalog
// (branches, torchtitan and toy-trainer registries), list completion, the matrix proposal,
// and the two config formats' errors, which must name the JSON path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "domain/workflow/comparer_config.h"
#include "domain/workflow/matrix.h"
#include "domain/workflow/premerge.h"
#include "domain/workflow/premerge_config.h"
#include "domain/workflow/repo_catalog.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"
#include "tests/common/temp_dir.h"

namespace parity::workflow {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing_support::TempDir;
constexpr auto& Write = testing_support::WriteFile;

using testing_support::Git;

TEST(RepoCatalog, TorchtitanLayoutAndToyModulesTable) {
  TempDir dir;
  Write(dir.path() / "torchtitan_npu/models/llama3/config_registry.py",
        "from x import y\n\ndef llama3_debug() -> JobConfig:\n    pass\n\ndef _helper():\n    pass\n\n"
        "def llama3_8b_tp2():\n    def inner():\n        pass\n");
  Write(dir.path() / "torchtitan_npu/models/deepseek_v3/config_registry.py", "def deepseek_v3_16b():\n    pass\n");
  Write(dir.path() / "toy_trainer/config_registry.py",
        "def _toy_small(cfg):\n    return 1\n\n"
        "MODULES = {\"toy\": {\"toy_small\": _toy_small,  # comment {\"not\": 1}\n"
        "                   'toy_tp2': _toy_tp2}, \"other\": {\"o1\": f}}\nDEFAULT_MODULE = \"toy\"\n");
  Write(dir.path() / ".hidden/models/ghost/config_registry.py", "def ghost():\n    pass\n");
  auto catalog = ReadModelCatalog(dir.path());
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  EXPECT_EQ(catalog->configs.at("llama3"), (std::vector<std::string>{"llama3_debug", "llama3_8b_tp2"}));
  EXPECT_EQ(catalog->configs.at("deepseek_v3"), (std::vector<std::string>{"deepseek_v3_16b"}));
  EXPECT_EQ(catalog->configs.at("toy"), (std::vector<std::string>{"toy_small", "toy_tp2"}));
  EXPECT_EQ(catalog->configs.at("other"), (std::vector<std::string>{"o1"}));
  EXPECT_EQ(catalog->configs.count("ghost"), 0u) << "hidden folders are skipped";
  EXPECT_EQ(ConfigsOf(*catalog, {"toy", "other"}), (std::vector<std::string>{"o1", "toy_small", "toy_tp2"}));
  EXPECT_FALSE(ReadModelCatalog(dir.path() / "missing").ok());
}

TEST(RepoCatalog, ToyTrainerOfThisRepository) {
  auto catalog = ReadModelCatalog(fs::path(PARITY_SOURCE_DIR) / "examples/toy-trainer");
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ASSERT_TRUE(catalog->configs.count("toy"));
  EXPECT_EQ(catalog->configs.at("toy"), (std::vector<std::string>{"toy_small", "toy_tp2", "toy_debug"}));
}

TEST(RepoCatalog, BranchesAndChangedFilesOfARealRepository) {
  TempDir dir;
  fs::path repo = dir.path() / "repo";
  fs::create_directories(repo);
  Git(repo, {"init", "-q", "-b", "main"});
  Write(repo / "a.py", "x = 1\n");
  Git(repo, {"add", "a.py"});
  Git(repo, {"commit", "-q", "-m", "one"});
  Git(repo, {"checkout", "-q", "-b", "feature/x"});
  Write(repo / "models/parallelize.py", "y = 2\n");
  Git(repo, {"add", "."});
  Git(repo, {"commit", "-q", "-m", "two"});
  Git(repo, {"update-ref", "refs/remotes/origin/master", "main"});
  Git(repo, {"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/master"});
  auto branches = ListBranches(repo);
  ASSERT_TRUE(branches.ok()) << branches.status().ToString();
  EXPECT_EQ(*branches, (std::vector<std::string>{"feature/x", "main", "origin/master"}));
  auto files = ChangedFiles(repo, "main", "feature/x");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(*files, (std::vector<std::string>{"models/parallelize.py"}));
  auto bad = ChangedFiles(repo, "main", "no-such-branch");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("no-such-branch"), std::string::npos) << bad.status().ToString();
  EXPECT_FALSE(ListBranches(dir.path() / "not-a-repo").ok());
}

TEST(CompleteList, CompletesTheLastItem) {
  std::vector<std::string> choices = {"toy_small", "toy_tp2", "toy_debug"};
  EXPECT_EQ(CompleteList("toy_t", choices), (std::vector<std::string>{"toy_tp2"}));
  EXPECT_EQ(CompleteList("toy_small,", choices), (std::vector<std::string>{"toy_small,toy_tp2", "toy_small,toy_debug"}));
  EXPECT_EQ(CompleteList("toy_small, toy_d", choices), (std::vector<std::string>{"toy_small,toy_debug"}));
  EXPECT_TRUE(CompleteList("zzz", choices).empty());
  EXPECT_EQ(CompleteList("", choices, 2).size(), 2u);
  EXPECT_EQ(SplitList(" a, b ,,c "), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(Matrix, MinimalMatrixAndTouchedAxes) {
  EXPECT_TRUE(LooksTensorParallel("toy_tp2"));
  EXPECT_TRUE(LooksTensorParallel("llama3_8b_tp_4"));
  EXPECT_FALSE(LooksTensorParallel("toy_tp1"));
  EXPECT_FALSE(LooksTensorParallel("stp2"));
  EXPECT_FALSE(LooksTensorParallel("toy_small"));
  auto p = ProposeMatrix({"toy_trainer/model.py", "toy_trainer/optimizer.py"}, {"toy_small", "toy_tp2", "toy_debug"});
  EXPECT_EQ(p.configs, (std::vector<std::string>{"toy_small", "toy_tp2"}));
  std::map<std::string, bool> touched;
  for (const auto& a : p.axes) touched[a.axis] = a.touched;
  EXPECT_TRUE(touched["tp"]);
  EXPECT_TRUE(touched["optimizer"]);
  EXPECT_FALSE(touched["compile"]);
  EXPECT_FALSE(touched["ep"]);
  EXPECT_FALSE(touched["resume"]);
  EXPECT_EQ(p.axes.size(), 8u);
  auto ckpt = ProposeMatrix({"toy_trainer/checkpoint.py"}, {"toy_small"});
  bool resume = false;
  for (const auto& a : ckpt.axes) resume = resume || (a.axis == "resume" && a.touched);
  EXPECT_TRUE(resume);
  bool named = false;
  for (const auto& n : ckpt.notes) named = named || n.find("resume_at") != std::string::npos;
  EXPECT_TRUE(named);
  auto none = ProposeMatrix({"README.md"}, {"only_one"});
  for (const auto& a : none.axes) EXPECT_FALSE(a.touched) << a.axis;
  EXPECT_EQ(none.configs, (std::vector<std::string>{"only_one"}));
  ASSERT_FALSE(none.notes.empty());
  EXPECT_NE(none.notes[0].find("TP>1"), std::string::npos);
}

TEST(PremergeConfig, DecodesAndResolvesPaths) {
  json j = {{"repo", "repo"}, {"baseline", "cann/master"}, {"candidate", "feature"}, {"model", "toy"},
            {"configs", {"toy_small", {{"name", "toy_tp2"}, {"extra_args", {"--x=1"}}}}},
            {"steps", 20}, {"confirm", {{"classes", "proposed"}, {"environment_anomalies", true}}}};
  auto c = ParsePremergeConfig(j, "premerge.json", "/base");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->repo, fs::path("/base/repo"));
  EXPECT_EQ(c->report_dir, fs::path("/base/repo/numerical_report"));
  ASSERT_EQ(c->configs.size(), 2u);
  EXPECT_EQ(c->configs[1].extra_args, (std::vector<std::string>{"--x=1"}));
  EXPECT_TRUE(c->confirm.classes_proposed);
  EXPECT_TRUE(c->confirm.environment_anomalies);
  EXPECT_FALSE(c->confirm.config_matrix);
  EXPECT_TRUE(c->cleanup);
}

TEST(PremergeConfig, ErrorsNameTheJsonPath) {
  auto err = [](json j) {
    auto c = ParsePremergeConfig(j, "premerge.json", "/base");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_NE(err(json::object()).find("premerge.json.baseline"), std::string::npos) << err(json::object());
  json j = {{"baseline", "main"}, {"configs", {"a", {{"nam", "b"}}}}};
  EXPECT_NE(err(j).find("premerge.json.configs[1]"), std::string::npos) << err(j);
  j = {{"baseline", "main"}, {"confirm", {{"classes", {{"a.py", "D"}}}}}};
  EXPECT_NE(err(j).find("confirm.classes[\"a.py\"]"), std::string::npos) << err(j);
  j = {{"baseline", "main"}, {"stepz", 3}};
  EXPECT_NE(err(j).find("stepz"), std::string::npos) << err(j);
  j = {{"baseline", "main"}, {"steps", 0}};
  EXPECT_NE(err(j).find("premerge.json.steps"), std::string::npos) << err(j);
  j = {{"baseline", "main"}, {"report", {{"language", "fr"}}}};
  EXPECT_NE(err(j).find("premerge.json.report.language"), std::string::npos) << err(j);
}

TEST(PremergeConfig, MetricsFileReplacesTensorBoardAndNeedsOneRunAtATime) {
  auto parse = [](json j) { return ParsePremergeConfig(j, "premerge.json", "/base"); };
  auto c = parse({{"baseline", "main"}, {"metrics_file", "outputs/metrics.jsonl"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->tensorboard) << "the trainer's file is the full-precision source";
  EXPECT_EQ(c->max_parallel, 1);
  c = parse({{"baseline", "main"}, {"metrics_file", "outputs/metrics.jsonl"}, {"executor", "slurm"}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->max_parallel, 1) << "Slurm's default of 16 side by side would share the file";
  for (const char* bad : {"/abs/metrics.jsonl", "../metrics.jsonl", "outputs/../../x", ""}) {
    auto e = parse({{"baseline", "main"}, {"metrics_file", bad}});
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("premerge.json.metrics_file"), std::string::npos) << e.status().message();
  }
  auto both = parse({{"baseline", "main"}, {"metrics_file", "m.jsonl"}, {"tensorboard", true}});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("two sources"), std::string::npos) << both.status().message();
  auto parallel = parse({{"baseline", "main"}, {"metrics_file", "m.jsonl"}, {"max_parallel", 4}});
  ASSERT_FALSE(parallel.ok());
  EXPECT_NE(parallel.status().message().find("max_parallel"), std::string::npos) << parallel.status().message();
}

TEST(ComparerConfig, MetricsFileOnBothSidesOrNeither) {
  auto side = [](bool with) {
    json s = {{"mode", "local"}, {"code_path", "/r"}, {"run_script", "bash run.sh"}};
    if (with) s["metrics_file"] = "outputs/metrics.jsonl";
    return s;
  };
  auto both = ParseComparerConfig({{"baseline", side(true)}, {"test", side(true)}}, "config.json");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->test.metrics_file, "outputs/metrics.jsonl");
  EXPECT_EQ(Redacted(*both)["baseline"]["metrics_file"], "outputs/metrics.jsonl");
  auto one = ParseComparerConfig({{"baseline", side(false)}, {"test", side(true)}}, "config.json");
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("config.json.baseline.metrics_file"), std::string::npos) << one.status().message();
  auto keywords = ParseComparerConfig(
      {{"baseline", side(true)}, {"test", side(true)}, {"debug", {{"log_keywords", {"lm loss"}}}}}, "config.json");
  ASSERT_FALSE(keywords.ok());
  EXPECT_NE(keywords.status().message().find("log_keywords"), std::string::npos) << keywords.status().message();
}

TEST(ComparerConfig, ReadsTheSeedFormatAndHidesThePassword) {
  json j = json::parse(R"({
    "baseline": {"mode": "local", "log_path": "/b.log", "code_path": "/b", "run_script": "bash run.sh",
                 "ssh": {"host": "10.0.0.1", "username": "root", "port": 22, "password": "pw"}},
    "test": {"mode": "remote", "log_path": "/t.log", "code_path": "/t", "run_script": "bash run.sh",
             "ssh": {"host": "10.0.0.2", "username": "root", "port": 2222, "password": "secret"}},
    "msprobe": {"baseline_data_dir": "/bd", "test_data_dir": "/td", "parse_code_dir": "/PanGu/",
                "compare_output_dir": "/out"},
    "debug": {"max_iterations": 10, "tolerance": 0.001, "log_keywords": ["mtp head 0 lm loss", "grad norm"],
              "trace_threshold": 0.001}})");
  auto c = ParseComparerConfig(j, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->test.ssh->port, 2222);
  EXPECT_EQ(c->log_keywords.size(), 2u);
  std::string redacted = Redacted(*c).dump();
  EXPECT_EQ(redacted.find("secret"), std::string::npos);
  EXPECT_NE(redacted.find("***"), std::string::npos);
  j["test"].erase("ssh");
  auto missing = ParseComparerConfig(j, "config.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json.test.ssh.host"), std::string::npos) << missing.status().message();
  j["test"]["mode"] = "cloud";
  auto bad_mode = ParseComparerConfig(j, "config.json");
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.status().message().find("config.json.test.mode"), std::string::npos) << bad_mode.status().message();
}

TEST(Verdicts, CombineAndExitCodes) {
  auto v = [](std::vector<std::string> verdicts) {
    std::vector<CaseVerdict> cases;
    for (auto& s : verdicts) cases.push_back({"c", s, "", ""});
    return CombineVerdicts(cases);
  };
  EXPECT_EQ(v({"PASS", "PASS"}), "PASS");
  EXPECT_EQ(v({"PASS", "INCONCLUSIVE"}), "INCONCLUSIVE");
  EXPECT_EQ(v({"INCONCLUSIVE", "FAIL"}), "FAIL");
  EXPECT_EQ(v({}), "INCONCLUSIVE");
  PremergeOutcome pass;
  pass.verdict = "PASS";
  EXPECT_EQ(PremergeExitCode(pass), 0);
  PremergeOutcome fail;
  fail.verdict = "FAIL";
  EXPECT_EQ(PremergeExitCode(fail), 1);
  PremergeOutcome unsure;
  unsure.verdict = "INCONCLUSIVE";
  EXPECT_EQ(PremergeExitCode(unsure), 2);
  EXPECT_EQ(PremergeExitCode(Result<PremergeOutcome>(Unavailable("x"))), 2);
}

}  // namespace
}  // namespace parity::workflow
