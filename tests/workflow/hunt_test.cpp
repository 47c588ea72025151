// parity hunt's loop (domain/workflow/hunt.h) over a scripted StepRunner on a real git
// repository: which tool is called with what, in which order, and the verdict each tool
// answer leads to (no divergence, the operator at the line, the stack's first divergent
// probe, probes that perturbed the numerics, errors), with the probes reverted on every
// path. The tools themselves run for real in workflow.hunt_e2e; here their answers are
// written out so each branch of the loop is reached, and what a failed hunt leaves behind
// (its worktrees removed, or kept with the command that removes them). The run_script
// rewriting, the line mapping and the config's additions: hunt_script_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>

#include "domain/msprobe/analyze.h"
#include "domain/workflow/comparer_config.h"
#include "domain/workflow/hunt.h"
#include "domain/workflow/hunt_repo.h"
#include "domain/workflow/hunt_script.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"
#include "tests/common/temp_dir.h"
#include "tests/run/sshd_fixture.h"

namespace parity::workflow {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing_support::TempDir;
constexpr auto& Write = testing_support::WriteFile;

using testing_support::Git;

// Answers each tool call from the test's script and records it. audit_workspace prepare
// makes real git worktrees (the loop maps lines through their commits).
class ScriptedRunner : public StepRunner {
 public:
  using Handler = std::function<Result<json>(const json& args)>;
  std::map<std::string, Handler> handlers;  // "tool" or "tool/action"
  std::vector<std::pair<std::string, json>> calls;
  std::map<std::string, bool> injected;  // worktree -> probes in
  bool write_files = false;  // inject really edits the target file and writes the helper
  std::map<std::string, std::string> originals;  // path -> bytes before injection

  Result<json> Call(const std::string& tool, const json& args) override {
    calls.push_back({tool, args});
    std::string key = tool + (args.contains("action") ? "/" + args["action"].get<std::string>() : "");
    if (tool == "inject_prints") return Inject(args);
    auto it = handlers.find(key);
    if (it == handlers.end()) it = handlers.find(tool);
    if (it == handlers.end()) return Internal("the script has no answer for " + key);
    return it->second(args);
  }

  size_t Count(const std::string& tool, const std::string& action = "") const {
    return std::count_if(calls.begin(), calls.end(), [&](const auto& c) {
      return c.first == tool && (action.empty() || c.second.value("action", "") == action);
    });
  }
  std::vector<json> Args(const std::string& tool, const std::string& action = "") const {
    std::vector<json> out;
    for (const auto& c : calls)
      if (c.first == tool && (action.empty() || c.second.value("action", "") == action)) out.push_back(c.second);
    return out;
  }

 private:
  Result<json> Inject(const json& args) {
    std::string wt = args["worktree"];
    std::string action = args["action"];
    if (action == "inject") {
      if (injected[wt]) return FailedPrecondition("already injected");
      injected[wt] = true;
      if (write_files) {
        const fs::path file = fs::path(wt) / args["targets"][0]["file"].get<std::string>();
        std::ifstream in(file, std::ios::binary);
        originals[file.string()] = std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(file, std::ios::app) << "_pp.probe()  # parity-probe\n";
        std::ofstream(fs::path(wt) / "_parity_probe.py") << "def probe(): pass\n";
      }
      return json{{"injected", true}, {"files", json::array({{{"path", args["targets"][0]["file"]}}})},
                  {"probes", json::array({json::object(), json::object()})}, {"analyser", "python-ast"}};
    }
    if (action == "revert") {
      bool was = injected[wt];
      injected[wt] = false;
      for (auto it = originals.begin(); write_files && it != originals.end();) {
        if (it->first.rfind(wt + "/", 0) != 0) { ++it; continue; }
        std::ofstream(it->first, std::ios::binary | std::ios::trunc) << it->second;
        it = originals.erase(it);
        fs::remove(fs::path(wt) / "_parity_probe.py");
      }
      return json{{"reverted", was}, {"files", json::array()}};
    }
    return json{{"injected", injected[wt]}};
  }
};

class NullObserver : public PipelineObserver {
 public:
  void Step(size_t, size_t, std::string_view title) override { steps.push_back(std::string(title)); }
  void Note(std::string_view line) override { notes.push_back(std::string(line)); }
  std::vector<std::string> steps, notes;
};

json Probe(const std::string& when, const std::string& name, const std::string& site, const std::string& type) {
  // The baseline's line differs (the change moved it); the key holds no line.
  return {{"key", "p|" + when + "|" + name}, {"id", "p1.1"}, {"site", "old/" + site}, {"when", when}, {"name", name},
          {"call", 1}, {"rank", 0}, {"baseline", {{"type", type}, {"hash", "aa"}, {"site", "old/" + site}}},
          {"candidate", {{"type", type}, {"hash", "bb"}, {"site", site}}}};
}

// A repository whose test branch changes line 3 of model.py; the tools' answers are set
// per test on `runner`.
class HuntLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() / "repo";
    fs::create_directories(repo_);
    Git(repo_, {"init", "-q", "-b", "main"});
    Write(repo_ / "model.py", "def f(x):\n    y = x + 1\n    return g(y)\n\n\ndef h(x):\n    return f(x)\n");
    Write(repo_ / "run.sh", "echo run\n");
    Git(repo_, {"add", "-A"});
    Git(repo_, {"commit", "-q", "-m", "base"});
    base_commit_ = Git(repo_, {"rev-parse", "HEAD"});
    Git(repo_, {"checkout", "-q", "-b", "change"});
    Write(repo_ / "model.py", "def f(x):\n    y = x + 1\n    return g2(y)\n\n\ndef h(x):\n    return f(x)\n");
    Git(repo_, {"commit", "-q", "-am", "change"});
    change_commit_ = Git(repo_, {"rev-parse", "HEAD"});
    Git(repo_, {"checkout", "-q", "main"});

    config_.name = "config.json";
    config_.baseline.code_path = config_.test.code_path = repo_.string();
    config_.baseline.run_script = "bash run.sh --training.steps 20 --dump.dir " + (dir_.path() / "db").string();
    config_.test.run_script = "bash run.sh --training.steps 20 --dump.dir " + (dir_.path() / "dt").string();
    config_.baseline.ref = "main";
    config_.test.ref = "change";
    config_.baseline_data_dir = (dir_.path() / "db").string();
    config_.test_data_dir = (dir_.path() / "dt").string();
    config_.tolerance = 0;
    options_.report_dir = dir_.path() / "report";

    runner_.handlers["audit_workspace/diff"] = [this](const json&) -> Result<json> {
      json files = json::array({{{"path", "model.py"}, {"origin", "committed"}, {"proposed", "A"}}});
      files.push_back({{"path", "numerical_report/"}, {"origin", "untracked"}, {"proposed", "ignore"}});
      if (dirty_) files.push_back({{"path", "run.sh"}, {"origin", "uncommitted"}, {"proposed", "B"}});
      return json{{"diff", {{"files", files}}}};
    };
    runner_.handlers["audit_workspace/prepare"] = [this](const json& a) -> Result<json> {
      const fs::path repo = a["repo"].get<std::string>();  // the user's, or the shadow repository
      Git(repo, {"worktree", "add", "-q", "--detach", a["baseline_path"], a["baseline"]});
      Git(repo, {"worktree", "add", "-q", "--detach", a["candidate_path"], a["candidate"]});
      return json{{"prepare", json::object()}};
    };
    runner_.handlers["audit_workspace/cleanup"] = [](const json&) -> Result<json> { return json{{"cleanup", json::object()}}; };
    runner_.handlers["run_training"] = [this](const json& a) -> Result<json> {
      if (fail_rerun_ && a["config"] != "hunt_logs") return Unavailable("training failed: exit code 1");
      if (write_log_) {
        Write(fs::path(a["worktree"].get<std::string>()) / "logs" / "train.log", "step: 1 loss: 1.0\n");
      }
      // A torchtitan-style run writes its TensorBoard events where parity asked, and the
      // dump where its run_script says.
      for (size_t i = 0; i < a["argv"].size(); ++i) {
        std::string w = a["argv"][i];
        if (w == "--dump.dir" && dump_from_.count(a["side"])) {
          fs::copy(dump_from_[a["side"]], a["argv"][i + 1].get<std::string>(),
                   fs::copy_options::recursive | fs::copy_options::overwrite_existing);
        } else if (w == "--dump.dir" && write_dumps_) {
          Write(fs::path(a["argv"][i + 1].get<std::string>()) / "step0/rank0/dump.json", "{}");
        }
        const std::string flag = "--metrics.save_tb_folder=";
        if (w.rfind(flag, 0) == 0) Write(fs::path(w.substr(flag.size())) / "20260101-0000" / "events.out.tfevents.1", "x");
      }
      return json{{"job", {{"log_path", "/logs/" + a["side"].get<std::string>() + "_" + a["config"].get<std::string>()},
                           {"message", "ok"}}}};
    };
    runner_.handlers["compare_logs"] = [this](const json& a) -> Result<json> {
      std::string c = a["case"];
      if (c == "hunt_logs" && log_verdict_ == "PASS" && logs_report_.is_object()) return logs_report_;
      if (c == "hunt_logs") return json{{"verdict", log_verdict_}, {"verdict_reason", "r"}};
      if (c.find("_check") != std::string::npos) {
        bool perturbed = perturbed_ && c.find("baseline") != std::string::npos;
        if (check_as_printed_ && !perturbed) return check_as_printed_report_;
        return json{{"verdict", perturbed ? "FAIL" : "PASS"}, {"verdict_reason", "r"}};
      }
      json first = c == "hunt_probe1" ? first1_ : first2_;
      json next = json::array();
      if (c == "hunt_probe1") next = next1_;
      if (c == "hunt_probe2" && first2_.is_object() && first2_["baseline"]["type"] != "torch.Tensor") {
        next.push_back(Probe("return", "return", "model.py:3", "torch.Tensor"));
      }
      return json{{"verdict", "INCONCLUSIVE"}, {"verdict_reason", "r"},
                  {"probes", {{"matched", 4}, {"divergent_count", first.is_null() ? 0 : 2},
                              {"first_divergent", first}, {"next_divergent", next}}}};
    };
    runner_.handlers["msprobe_first_diff"] = [this](const json& a) -> Result<json> {
      if (real_first_diff_) {  // the domain function behind the tool, on the dumps the runs left
        msprobe::AnalyzeOptions o;
        o.baseline_dump = a["baseline_dump"].get<std::string>();
        o.candidate_dump = a["candidate_dump"].get<std::string>();
        o.criteria.mode = a["criterion"] == "bitwise" ? msprobe::DiffCriteria::Mode::kBitwise
                                                      : msprobe::DiffCriteria::Mode::kMsprobe;
        o.locate.worktree = a["worktree"].get<std::string>();
        o.output_dir = options_.report_dir / "hunt";
        o.write_compare_table = a.value("compare_table", false);
        return msprobe::AnalyzeFirstDiff(o);
      }
      fs::path wt = a["worktree"].get<std::string>();
      json stack = json::array({{{"file", (wt / "model.py").string()}, {"line", 3}, {"function", "f"}, {"user", true}},
                                {{"file", "/usr/lib/python3/dist-packages/torch/x.py"}, {"line", 9}, {"function", "c"}, {"user", false}},
                                {{"file", (wt / "model.py").string()}, {"line", 7}, {"function", "h"}, {"user", true}},
                                {{"file", (wt / "train.py").string()}, {"line", 1}, {"function", "<module>"}, {"user", true}}});
      json doc = {{"schema", "parity.hunt/1"}, {"found", true}, {"explanation", "e"},
                  {"source", {{"candidate", {{"step", 0}, {"rank", 0}}}}},
                  {"first_divergence", {{"api", "Functional.g.0.forward"}, {"verdict", "operator"}, {"stack", stack},
                                        {"source", {{"local_file", (wt / "model.py").string()}, {"line", 3},
                                                    {"function", "f"}, {"line_text", "    return g2(y)"},
                                                    {"in_changed_hunk", true},
                                                    {"hunk", {{"file", "model.py"}, {"lines", {"-    return g(y)", "+    return g2(y)"}}}}}}}}};
      if (fd_cause_.is_object()) {
        doc["first_divergence"]["cause"] = fd_cause_;
        doc["first_divergence"]["verdict"] = fd_cause_["kind"];
        if (fd_cause_["trace"].is_object()) {  // the line did not change: the value was set elsewhere
          doc["first_divergence"]["source"]["in_changed_hunk"] = false;
          doc["first_divergence"]["source"]["hunk"] = nullptr;
        }
      }
      fs::create_directories(options_.report_dir / "hunt");
      std::ofstream(options_.report_dir / "hunt" / "hunt.json") << doc.dump();
      return doc;
    };
    runner_.handlers["render_report"] = [this](const json&) -> Result<json> {
      return json{{"outputs", {{"html", (options_.report_dir / "report/report.html").string()}}}};
    };
  }

  // The test branch instead inserts line 3 of model.py (a statement with no baseline line).
  void CommitInsertedStatement() {
    Git(repo_, {"checkout", "-q", "change"});
    Write(repo_ / "model.py", "def f(x):\n    y = x + 1\n    y = g2(y)\n    return g(y)\n\n\ndef h(x):\n    return f(x)\n");
    Git(repo_, {"commit", "-q", "-am", "change inserts a statement"});
    Git(repo_, {"checkout", "-q", "main"});
  }
  Result<HuntOutcome> Hunt() {
    NullObserver obs;
    return RunHunt(config_, options_, runner_, obs);
  }
  void ExpectAllReverted() {
    for (const auto& [wt, in] : runner_.injected) EXPECT_FALSE(in) << wt << " still has probes";
  }
  json HuntJson() {
    std::ifstream in(options_.report_dir / "hunt" / "hunt.json");
    return json::parse(in, nullptr, false);
  }

  TempDir dir_;
  fs::path repo_;
  std::string base_commit_, change_commit_;
  ComparerConfig config_;
  HuntOptions options_;
  ScriptedRunner runner_;
  std::string log_verdict_ = "FAIL";
  json first1_ = Probe("after", "return", "model.py:3", "torch.Tensor");
  json first2_, next1_ = json::array();
  json fd_cause_, logs_report_, check_as_printed_report_;
  bool check_as_printed_ = false, real_first_diff_ = false;
  std::map<std::string, fs::path> dump_from_;  // side -> a dump folder the run "writes"
  bool perturbed_ = false, dirty_ = false, fail_rerun_ = false, write_dumps_ = true, write_log_ = false;
};

TEST_F(HuntLoop, EqualLogsEndWithNoDivergence) {
  log_verdict_ = "PASS";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntNoDivergence);
  EXPECT_EQ(HuntExitCode(out), 0);
  EXPECT_EQ(runner_.Count("msprobe_first_diff"), 0u);
  EXPECT_EQ(runner_.Count("inject_prints"), 0u);
  EXPECT_EQ(runner_.Count("run_training"), 2u);
  EXPECT_EQ(runner_.Count("audit_workspace", "cleanup"), 1u);
  // The runs use the commits of the refs, in worktrees beside the repository.
  auto prepare = runner_.Args("audit_workspace", "prepare").at(0);
  EXPECT_EQ(prepare["baseline"], base_commit_);
  EXPECT_EQ(prepare["candidate"], change_commit_);
  EXPECT_EQ(prepare["candidate_path"], (dir_.path() / "repo-hunt-candidate").string());
  // Bitwise at tolerance 0, on the full-precision TensorBoard events of the torchtitan-style
  // runs; the run_script's words as argv, in the worktree.
  auto compare = runner_.Args("compare_logs").at(0);
  EXPECT_EQ(compare.value("bitwise", false), true);
  EXPECT_NE(compare["baseline"].get<std::string>().find("/tb/baseline_hunt_logs/"), std::string::npos) << compare;
  auto run = runner_.Args("run_training").at(0);
  EXPECT_EQ(run["launcher"], "argv");
  EXPECT_EQ(run["argv"][0], "bash");
  EXPECT_EQ(run["steps"], 20);
  json doc = HuntJson();
  EXPECT_EQ(doc["hunt"]["verdict"], kHuntNoDivergence);
  EXPECT_TRUE(doc["first_divergence"].is_null());
}

TEST_F(HuntLoop, InputsEqualOutputDiffersEndsAtTheLine) {
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntOperator);
  EXPECT_EQ(HuntExitCode(out), 1);
  EXPECT_EQ(out->located["file"], "model.py");
  EXPECT_EQ(out->located["line"], 3);
  EXPECT_EQ(out->located["hunk"]["lines"][1], "+    return g2(y)");
  // Both worktrees instrumented at the statement, reruns of step 0 only, then reverted.
  auto injects = runner_.Args("inject_prints", "inject");
  ASSERT_EQ(injects.size(), 2u);
  EXPECT_EQ(injects[0]["targets"], json::parse(R"([{"file": "model.py", "line": 3}])"));
  EXPECT_EQ(injects[0]["calls"], json::array({1}));
  EXPECT_EQ(runner_.Count("inject_prints", "revert"), 2u);
  EXPECT_GE(runner_.Count("inject_prints", "status"), 2u);
  ExpectAllReverted();
  auto reruns = runner_.Args("run_training");
  ASSERT_EQ(reruns.size(), 4u);
  EXPECT_EQ(reruns[2]["config"], "hunt_probe1");
  EXPECT_EQ(reruns[2]["steps"], 1);
  EXPECT_EQ(reruns[2]["argv"][3], "1");  // --training.steps 1
  // Probes compared on the logs, the perturbation check on the events.
  auto compares = runner_.Args("compare_logs");
  ASSERT_EQ(compares.size(), 4u);
  EXPECT_EQ(compares[1]["case"], "hunt_probe1_baseline_check");
  EXPECT_EQ(compares[1]["steps"], "common");
  EXPECT_NE(compares[1]["candidate"].get<std::string>().find("tfevents"), std::string::npos);
  EXPECT_EQ(compares[3]["case"], "hunt_probe1");
  EXPECT_EQ(compares[3]["baseline"], "/logs/baseline_hunt_probe1");
  // msprobe_first_diff diffs the two commits in the candidate worktree.
  auto fd = runner_.Args("msprobe_first_diff").at(0);
  EXPECT_EQ(fd["baseline_ref"], base_commit_);
  EXPECT_EQ(fd["criterion"], "bitwise");
  EXPECT_FALSE(fd.contains("compare_table"));  // no compare_output_dir: the table is not written
  json doc = HuntJson();
  EXPECT_EQ(doc["first_divergence"]["api"], "Functional.g.0.forward");  // msprobe's part kept
  EXPECT_EQ(doc["hunt"]["verdict"], kHuntOperator);
  EXPECT_EQ(doc["hunt"]["iterations"].size(), 1u);
  EXPECT_EQ(doc["hunt"]["iterations"][0]["perturbation"]["baseline"]["verdict"], "PASS");
}

// Two different repositories (a clone of the test repository holds the baseline): both
// trees go into the shadow repository, whose worktrees and commits every step uses; the
// outcome names the real commits.
TEST_F(HuntLoop, TwoRepositoriesGoThroughTheShadowRepository) {
  const fs::path clone = dir_.path() / "clone";
  Git(dir_.path(), {"clone", "-q", "--no-local", repo_.string(), clone.string()});
  config_.baseline.code_path = clone.string();
  config_.baseline.ref = "origin/main";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntOperator);
  EXPECT_EQ(out->baseline_commit, base_commit_);
  EXPECT_EQ(out->candidate_commit, change_commit_);
  EXPECT_EQ(out->located["hunk"]["lines"][1], "+    return g2(y)");
  const fs::path shadow = options_.report_dir / "hunt" / "shadow";
  auto prepare = runner_.Args("audit_workspace", "prepare").at(0);
  EXPECT_EQ(prepare["repo"], shadow.string());
  json doc = HuntJson();
  const json& recorded = doc["hunt"]["shadow"];
  EXPECT_EQ(recorded["origin"]["baseline"]["commit"], base_commit_);
  EXPECT_EQ(recorded["origin"]["test"]["commit"], change_commit_);
  EXPECT_EQ(recorded["trees"]["candidate"], Git(repo_, {"rev-parse", change_commit_ + "^{tree}"}));
  EXPECT_EQ(doc["hunt"]["commits"]["baseline"], base_commit_);
  auto fd = runner_.Args("msprobe_first_diff").at(0);
  EXPECT_EQ(fd["baseline_ref"], recorded["commits"]["baseline"]);
  EXPECT_EQ(fd["candidate_ref"], recorded["commits"]["candidate"]);
  EXPECT_EQ(Git(shadow, {"rev-parse", "HEAD"}), recorded["commits"]["candidate"]);
  ExpectAllReverted();
  // A baseline clone with uncommitted changes is refused: its commit would not hold them.
  Write(clone / "model.py", "changed\n");
  auto dirty = Hunt();
  ASSERT_FALSE(dirty.ok());
  EXPECT_NE(dirty.status().message().find("uncommitted changes"), std::string::npos) << dirty.status().ToString();
}

// The test side over SSH (a real sshd on loopback; its paths are this machine's): the shadow
// holds both commits, the run happens in a worktree beside the test tree "there", the dump
// and events come back, the probes are uploaded for the rerun and restored after it
// (checked there), the remote worktree goes, and the password is never passed on.
class HuntRemoteLoop : public HuntLoop {
 protected:
  void SetUp() override {
    HuntLoop::SetUp();
    ASSERT_TRUE(sshd_.ok()) << sshd_.error();
    config_.test.mode = "remote";
    config_.test.ssh = ComparerSsh{"127.0.0.1", "root", sshd_.port(), "pw-unit-SECRET",
                                   sshd_.user_key().string(), sshd_.known_hosts().string(), std::nullopt};
    runner_.write_files = true;
    remote_wt_ = repo_.string() + "-hunt-candidate";
    auto run = runner_.handlers["run_training"];
    runner_.handlers["run_training"] = [this, run](const json& a) -> Result<json> {
      if (a["config"] == "hunt_probe1" && a["side"] == "candidate") {
        std::ifstream in(remote_wt_ / "model.py");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        probes_seen_remotely_ = text.find("parity-probe") != std::string::npos && fs::exists(remote_wt_ / "_parity_probe.py");
        if (kill_connections_) sshd_.KillConnections();
      }
      return run(a);
    };
  }
  testing::SshdFixture sshd_;
  fs::path remote_wt_;
  bool probes_seen_remotely_ = false, kill_connections_ = false;
};

TEST_F(HuntRemoteLoop, TheTestSideRunsOverSsh) {
  const std::string original = Git(repo_, {"show", change_commit_ + ":model.py"}) + "\n";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntOperator);
  EXPECT_EQ(out->candidate_commit, change_commit_);
  auto runs = runner_.Args("run_training");
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_FALSE(runs[0].contains("mode"));  // the baseline runs here, in its shadow worktree
  EXPECT_EQ(runs[0]["worktree"], (options_.report_dir / "hunt" / "shadow-hunt-baseline").string());
  EXPECT_EQ(runs[1]["mode"], "remote");
  EXPECT_EQ(runs[1]["worktree"], remote_wt_.string());
  EXPECT_EQ(runs[1]["ssh"]["password_env"], "PARITY_HUNT_SSH_PASSWORD_TEST");
  EXPECT_EQ(runs[1]["ssh"]["known_hosts"], sshd_.known_hosts().string());
  for (const auto& call : runner_.calls) EXPECT_EQ(call.second.dump().find("pw-unit-SECRET"), std::string::npos);
  EXPECT_TRUE(probes_seen_remotely_) << "the rerun did not find the probes in the remote worktree";
  json doc = HuntJson();
  EXPECT_EQ(doc.dump().find("pw-unit-SECRET"), std::string::npos);
  const json& loop = doc["hunt"];
  EXPECT_EQ(loop["remote_worktrees"]["candidate"]["path"], remote_wt_.string());
  EXPECT_EQ(loop["fetched"]["candidate"].size(), 1u);
  EXPECT_TRUE(fs::exists(options_.report_dir / "hunt" / "remote" / "candidate" / "step0" / "rank0" / "dump.json"));
  auto fd = runner_.Args("msprobe_first_diff").at(0);
  EXPECT_EQ(fd["candidate_dump"], (options_.report_dir / "hunt" / "remote" / "candidate").string());
  bool remote_restored = false;
  for (const json& r : loop["restored"]) {
    if (r.contains("remote")) remote_restored = r["remote"]["files"][0]["path"] == "model.py";
  }
  EXPECT_TRUE(remote_restored) << loop["restored"].dump();
  EXPECT_FALSE(fs::exists(remote_wt_)) << "the remote worktree was not removed";
  EXPECT_EQ(Git(repo_, {"worktree", "list"}).find("hunt-candidate"), std::string::npos);
}

TEST_F(HuntRemoteLoop, ALostConnectionStopsTheHuntButTheRemoteProbesAreStillReverted) {
  kill_connections_ = true;
  options_.keep_worktrees = true;  // to look at the remote files after the hunt
  const std::string original = Git(repo_, {"show", change_commit_ + ":model.py"}) + "\n";
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kUnavailable) << out.status().ToString();
  EXPECT_NE(out.status().message().find("config.json.test (remote root@127.0.0.1"), std::string::npos)
      << out.status().ToString();
  EXPECT_TRUE(probes_seen_remotely_);
  // Reconnected for the revert: the file restored there, the helper gone.
  std::ifstream in(remote_wt_ / "model.py");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), original);
  EXPECT_FALSE(fs::exists(remote_wt_ / "_parity_probe.py"));
  ExpectAllReverted();
  EXPECT_NE(out.status().hint().find("the remote worktree " + remote_wt_.string() + " on root@127.0.0.1"),
            std::string::npos) << out.status().hint();
  EXPECT_NE(out.status().hint().find("is kept (--keep-worktrees); remove it with `git -C"), std::string::npos)
      << out.status().hint();
  Git(repo_, {"worktree", "remove", "--force", remote_wt_.string()});
}

TEST_F(HuntRemoteLoop, ACancelDuringTheRerunStillRevertsTheRemoteProbes) {
  CancellationSource cancel;
  options_.cancel = cancel.token();
  options_.keep_worktrees = true;  // to look at the remote files after the hunt
  auto run = runner_.handlers["run_training"];
  runner_.handlers["run_training"] = [&cancel, run](const json& a) -> Result<json> {
    if (a["config"] == "hunt_probe1" && a["side"] == "candidate") cancel.Cancel();  // as SIGINT does
    return run(a);
  };
  const std::string original = Git(repo_, {"show", change_commit_ + ":model.py"}) + "\n";
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kCancelled) << out.status().ToString();
  EXPECT_TRUE(probes_seen_remotely_);
  std::ifstream in(remote_wt_ / "model.py");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), original);
  EXPECT_FALSE(fs::exists(remote_wt_ / "_parity_probe.py"));
  ExpectAllReverted();
  Git(repo_, {"worktree", "remove", "--force", remote_wt_.string()});
}

TEST_F(HuntRemoteLoop, ACancelledHuntStillRemovesItsWorktreesHereAndThere) {
  CancellationSource cancel;
  options_.cancel = cancel.token();
  auto run = runner_.handlers["run_training"];
  runner_.handlers["run_training"] = [&cancel, run](const json& a) -> Result<json> {
    if (a["config"] == "hunt_probe1" && a["side"] == "candidate") cancel.Cancel();
    return run(a);
  };
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kCancelled) << out.status().ToString();
  EXPECT_FALSE(fs::exists(remote_wt_)) << "the cancel stopped the removal of the remote worktree";
  EXPECT_NE(out.status().hint().find("the remote worktree " + remote_wt_.string()), std::string::npos);
  EXPECT_NE(out.status().hint().find("was removed"), std::string::npos) << out.status().hint();
  EXPECT_EQ(runner_.Count("audit_workspace", "cleanup"), 1u);
}

TEST_F(HuntRemoteLoop, TheRemoteLogPathIsFetched) {
  // log_path on the host: the newest file the run wrote there is copied into the report.
  config_.baseline.log_path = (repo_ / "logs").string();
  config_.test.log_path = (repo_ / "logs").string();  // mapped into the remote worktree
  write_log_ = true;
  log_verdict_ = "PASS";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto compare = runner_.Args("compare_logs").at(0);
  EXPECT_EQ(compare["candidate"], (options_.report_dir / "hunt/logs/candidate_hunt_logs.log").string());
  std::ifstream kept(options_.report_dir / "hunt/logs/candidate_hunt_logs.log");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "step: 1 loss: 1.0\n");
  EXPECT_EQ(runner_.Args("run_training").at(1)["worktree"], remote_wt_.string());
  // Not written there by the run: an error naming the field and the host.
  write_log_ = false;
  runner_.calls.clear();
  config_.baseline.log_path.clear();
  auto missing = Hunt();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json.test.log_path"), std::string::npos) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("on root@127.0.0.1"), std::string::npos) << missing.status().ToString();
}

TEST_F(HuntLoop, InputsDifferInstrumentTheStackFunctions) {
  first1_ = Probe("before", "y", "model.py:3", "torch.Tensor");
  // main's argv differs only by each side's own dump folder: skipped for the next probe.
  first2_ = Probe("entry", "argv", "train.py:1", "list");
  first2_["baseline"]["value"] = "['run', '--dump.dir', '" + config_.baseline_data_dir + "']";
  first2_["candidate"]["value"] = "['run', '--dump.dir', '" + config_.test_data_dir + "']";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntProbe);
  EXPECT_EQ(out->located["when"], "return");
  EXPECT_EQ(out->located["site"], "model.py:3");  // the test side's line
  // The sentence says what the probes showed, not more: no claim that nothing else changed.
  EXPECT_NE(out->explanation.find("the function's arguments at its entry included, is equal on both sides"),
            std::string::npos) << out->explanation;
  auto injects = runner_.Args("inject_prints", "inject");
  ASSERT_EQ(injects.size(), 4u);
  EXPECT_EQ(injects[2]["targets"], json::parse(R"([{"file": "model.py", "line": 3, "enclosing_function": true},
                                                   {"file": "model.py", "line": 7, "enclosing_function": true}])"));
  ExpectAllReverted();
  json doc = HuntJson();
  EXPECT_EQ(doc["hunt"]["iterations"].size(), 2u);
  EXPECT_EQ(doc["hunt"]["iterations"][1]["non_tensor_divergence_skipped"]["name"], "argv");
}

TEST_F(HuntLoop, OneIterationAllowedAndInputsDifferIsInconclusive) {
  config_.max_iterations = 1;
  first1_ = Probe("before", "y", "model.py:3", "torch.Tensor");
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntInconclusive);
  EXPECT_EQ(HuntExitCode(out), 2);
  EXPECT_NE(out->explanation.find("max_iterations"), std::string::npos);
}

// The change inserted the located statement (no baseline line maps to it): iteration 1 has
// nothing on the baseline to compare it with, so the hunt goes straight to the functions on
// its stack, each side at its own lines (the baseline's enclosing function found from the
// line above), and says why.
TEST_F(HuntLoop, AStatementTheChangeAddedIsComparedThroughTheFunctionsAroundIt) {
  CommitInsertedStatement();
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto injects = runner_.Args("inject_prints", "inject");
  ASSERT_EQ(injects.size(), 2u);  // one iteration, both sides
  EXPECT_EQ(injects[0]["targets"], json::parse(R"([{"file": "model.py", "line": 2, "enclosing_function": true},
                                                   {"file": "model.py", "line": 6, "enclosing_function": true}])"));
  EXPECT_EQ(injects[1]["targets"], json::parse(R"([{"file": "model.py", "line": 3, "enclosing_function": true},
                                                   {"file": "model.py", "line": 7, "enclosing_function": true}])"));
  // No probe of the stack's functions differs in this script: inconclusive, and it says so.
  EXPECT_EQ(out->verdict, kHuntInconclusive);
  EXPECT_NE(out->explanation.find("the probes of iteration 2 are equal on both sides"), std::string::npos)
      << out->explanation;
  ExpectAllReverted();
  json doc = HuntJson();
  ASSERT_EQ(doc["hunt"]["iterations"].size(), 1u);
  EXPECT_EQ(doc["hunt"]["iterations"][0]["iteration"], 2);
  EXPECT_NE(doc["hunt"]["iterations"][0].dump().find("model.py:3 was added by the change, so the baseline has no "
                                                      "statement to compare it with"),
            std::string::npos) << doc["hunt"]["iterations"][0].dump(2);
}

// The same with one iteration allowed: nothing is probed, and the sentence says why.
TEST_F(HuntLoop, AStatementTheChangeAddedWithOneIterationIsInconclusive) {
  config_.max_iterations = 1;
  CommitInsertedStatement();
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntInconclusive);
  EXPECT_TRUE(runner_.Args("inject_prints", "inject").empty());
  EXPECT_NE(out->explanation.find("model.py:3 was added by the change"), std::string::npos) << out->explanation;
  EXPECT_NE(out->explanation.find("max_iterations (1)"), std::string::npos) << out->explanation;
  ExpectAllReverted();
}

TEST_F(HuntLoop, PerturbedBaselineIsInconclusive) {
  perturbed_ = true;
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntInconclusive);
  EXPECT_NE(out->explanation.find("perturbed"), std::string::npos) << out->explanation;
  ExpectAllReverted();
}

TEST_F(HuntLoop, AFailedRerunStillRevertsAndRemovesTheWorktrees) {
  fail_rerun_ = true;
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(HuntExitCode(out), 2);
  EXPECT_NE(out.status().message().find("training failed"), std::string::npos) << out.status().ToString();
  EXPECT_EQ(runner_.Count("inject_prints", "revert"), 2u);
  ExpectAllReverted();
  // Nothing left in the way of the next run, and the error says so.
  auto cleanup = runner_.Args("audit_workspace", "cleanup");
  ASSERT_EQ(cleanup.size(), 1u);
  EXPECT_EQ(cleanup[0]["paths"], json({(dir_.path() / "repo-hunt-baseline").string(),
                                       (dir_.path() / "repo-hunt-candidate").string()}));
  EXPECT_NE(out.status().hint().find("repo-hunt-candidate were removed"), std::string::npos) << out.status().hint();
}

TEST_F(HuntLoop, AFailedHuntSaysWhereTheKeptWorktreesAreAndHowToRemoveThem) {
  fail_rerun_ = true;
  options_.keep_worktrees = true;
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(runner_.Count("audit_workspace", "cleanup"), 0u);
  const std::string hint = out.status().hint();
  EXPECT_NE(hint.find("are kept (--keep-worktrees); remove them with: parity call audit_workspace "
                      "'{\"action\":\"cleanup\",\"force\":true,\"paths\":[\"" + (dir_.path() / "repo-hunt-baseline").string()),
            std::string::npos) << hint;
  // A cleanup the tool refuses (a worktree parity did not make, changes): kept, and said.
  options_.keep_worktrees = false;
  runner_.calls.clear();
  runner_.handlers["audit_workspace/cleanup"] = [](const json&) -> Result<json> {
    return FailedPrecondition("worktree x has changes parity did not make (2 files)");
  };
  fs::remove_all(dir_.path() / "repo-hunt-baseline");
  fs::remove_all(dir_.path() / "repo-hunt-candidate");
  Git(repo_, {"worktree", "prune"});
  out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().hint().find("are kept: removing them failed (audit_workspace: worktree x has changes parity did "
                                     "not make (2 files)); remove them with: parity call audit_workspace"),
            std::string::npos) << out.status().hint();
}

TEST_F(HuntLoop, StaleWorktreesOfAnEarlierRunAreRemovedOnlyWithYes) {
  log_verdict_ = "PASS";
  runner_.handlers["audit_workspace/prepare"] = [this](const json& a) -> Result<json> {
    if (!a.value("remove_stale", false)) {
      return FailedPrecondition("parity's own worktree(s) of an earlier run of x stand where this run's go")
          .WithHint("confirm their removal (remove_stale=true) and parity removes them first, or ...")
          .WithEvidence("stale_worktrees", json::array({{{"path", (dir_.path() / "repo-hunt-baseline").string()}}}).dump());
    }
    Git(repo_, {"worktree", "add", "-q", "--detach", a["baseline_path"], a["baseline"]});
    Git(repo_, {"worktree", "add", "-q", "--detach", a["candidate_path"], a["candidate"]});
    return json{{"prepare", json::object()}};
  };
  auto refused = Hunt();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().hint().find("run again with --yes and parity removes them first, or remove them yourself: "
                                         "parity call audit_workspace"),
            std::string::npos) << refused.status().hint();
  EXPECT_EQ(runner_.Count("run_training"), 0u);
  EXPECT_EQ(runner_.Count("audit_workspace", "cleanup"), 0u) << "nothing of this run to remove";
  options_.assume_yes = true;
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(runner_.Args("audit_workspace", "prepare").back()["remove_stale"], true);
}

TEST_F(HuntLoop, RunScriptVariablesReachTheChildLiterally) {
  log_verdict_ = "PASS";
  const std::string test_script = config_.test.run_script;
  // A job file the test commit does not hold is refused before anything is made.
  config_.test.run_script = "CONFIG_FILE=" + repo_.string() + "/cfg.toml " + test_script;
  auto missing = Hunt();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json.test.run_script: the job config file cfg.toml is not in the "
                                            "test commit " + change_commit_.substr(0, 12)),
            std::string::npos) << missing.status().ToString();
  EXPECT_EQ(runner_.Count("audit_workspace", "prepare"), 0u);

  config_.test.run_script = "A=1 B=$(touch_x) DATA=" + repo_.string() + "/data A=2 " + test_script;
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto runs = runner_.Args("run_training");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].contains("env")) << "the baseline's run_script sets nothing";
  EXPECT_EQ(runs[1]["env"], json({{"A", "2"}, {"B", "$(touch_x)"},
                                  {"DATA", (dir_.path() / "repo-hunt-candidate/data").string()}}));
  EXPECT_EQ(runs[1]["argv"][0], "bash");
  ASSERT_EQ(out->warnings.size(), 1u);
  EXPECT_NE(out->warnings[0].find("B=$(touch_x) is passed literally"), std::string::npos) << out->warnings[0];
}

TEST_F(HuntLoop, TheConfigsLogPathIsWhatIsCompared) {
  // PrecisionComparer's log_path (a folder under code_path here): the run's newest file in
  // the worktree's copy of that folder, kept in the report directory; no TensorBoard.
  config_.baseline.log_path = config_.test.log_path = (repo_ / "logs").string();
  write_log_ = true;
  log_verdict_ = "PASS";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  auto compare = runner_.Args("compare_logs").at(0);
  EXPECT_EQ(compare["baseline"], (options_.report_dir / "hunt/logs/baseline_hunt_logs.log").string());
  EXPECT_EQ(compare["candidate"], (options_.report_dir / "hunt/logs/candidate_hunt_logs.log").string());
  std::ifstream kept(options_.report_dir / "hunt/logs/baseline_hunt_logs.log");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "step: 1 loss: 1.0\n");
  for (const auto& run : runner_.Args("run_training")) {
    for (const auto& word : run["argv"]) EXPECT_EQ(word.get<std::string>().find("--metrics."), std::string::npos);
  }
  // A log_path the run does not write is an error naming it.
  write_log_ = false;
  runner_.calls.clear();
  fs::remove_all(dir_.path() / "repo-hunt-baseline");
  fs::remove_all(dir_.path() / "repo-hunt-candidate");
  Git(repo_, {"worktree", "prune"});
  auto missing = Hunt();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json.baseline.log_path"), std::string::npos)
      << missing.status().ToString();
}

TEST_F(HuntLoop, ARunWithoutAFreshDumpStops) {
  write_dumps_ = false;
  fs::path stale = dir_.path() / "db" / "step0/rank0/dump.json";  // left by an earlier run
  Write(stale, "{}");
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(1));
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("config.json.msprobe.baseline_data_dir"), std::string::npos)
      << out.status().ToString();
  EXPECT_EQ(runner_.Count("msprobe_first_diff"), 0u);
}

TEST_F(HuntLoop, UncommittedFilesNeedConsent) {
  dirty_ = true;
  auto out = Hunt();
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(out.status().hint().find("--yes"), std::string::npos);
  EXPECT_EQ(runner_.Count("audit_workspace", "prepare"), 0u);
  EXPECT_EQ(runner_.Count("run_training"), 0u);
  options_.assume_yes = true;
  runner_.calls.clear();
  auto yes = Hunt();
  ASSERT_TRUE(yes.ok()) << yes.status().ToString();
  EXPECT_EQ(runner_.Args("audit_workspace", "prepare").at(0)["classes"]["run.sh"], "B");
}

TEST_F(HuntLoop, RefusesWhatItCannotDo) {
  // A remote side whose host does not answer (nothing listens on port 1): the error names
  // the side and its host, never the password, and nothing is called.
  config_.test.mode = "remote";
  config_.test.ssh = ComparerSsh{"127.0.0.1", "root", 1, "s3cret-pw", std::nullopt, std::nullopt, std::nullopt};
  auto remote = Hunt();
  ASSERT_FALSE(remote.ok());
  EXPECT_NE(remote.status().message().find("config.json.test (remote root@127.0.0.1:1)"), std::string::npos)
      << remote.status().ToString();
  EXPECT_NE(remote.status().message().find("cannot connect"), std::string::npos) << remote.status().ToString();
  EXPECT_EQ(remote.status().ToString().find("s3cret-pw"), std::string::npos);
  config_.test.mode = "local";
  config_.test.ref = "no-such-branch";
  auto ref = Hunt();
  ASSERT_FALSE(ref.ok());
  EXPECT_NE(ref.status().message().find("config.json.test.ref"), std::string::npos) << ref.status().ToString();
  config_.test.ref = "change";
  config_.test_data_dir.clear();
  auto dumps = Hunt();
  ASSERT_FALSE(dumps.ok());
  EXPECT_NE(dumps.status().message().find("config.json.msprobe.test_data_dir"), std::string::npos);
  EXPECT_TRUE(runner_.calls.empty());
}

// PrecisionComparer's three msprobe/debug fields: parse_code_dir picks the user frames,
// compare_output_dir receives the compare table under msprobe's name, trace_threshold
// decides which probe difference is followed (bitwise ones within it are only reported).
TEST_F(HuntLoop, TraceThresholdParseCodeDirAndCompareOutputDirAreUsed) {
  config_.trace_threshold = 0.001;
  config_.parse_code_dir = "/repo-hunt-";
  config_.compare_output_dir = (dir_.path() / "compare_out").string();
  auto first_diff = runner_.handlers["msprobe_first_diff"];
  runner_.handlers["msprobe_first_diff"] = [this, first_diff](const json& a) -> Result<json> {
    auto doc = first_diff(a);
    if (!doc.ok()) return doc;
    const fs::path table = options_.report_dir / "hunt" / "compare_table.csv";
    std::ofstream(table) << "NPU Name,Bench Name\nFunctional.g.0.forward.output.0,Functional.g.0.forward.output.0\n";
    (*doc)["compare_table"] = table.string();
    return doc;
  };
  json within = Probe("before", "y", "model.py:3", "torch.Tensor");
  within["within_tolerance"] = true;
  json beyond = Probe("after", "return", "model.py:3", "torch.Tensor");
  beyond["within_tolerance"] = false;
  runner_.handlers["compare_logs"] = [this, within, beyond](const json& a) -> Result<json> {
    std::string c = a["case"];
    if (c == "hunt_logs") return json{{"verdict", "FAIL"}, {"verdict_reason", "r"}};
    if (c.find("_check") != std::string::npos) return json{{"verdict", "PASS"}, {"verdict_reason", "r"}};
    return json{{"verdict", "INCONCLUSIVE"}, {"verdict_reason", "r"},
                {"probes", {{"matched", 4}, {"divergent_count", 2}, {"beyond_tolerance_count", 1},
                            {"first_divergent", within}, {"next_divergent", json::array({beyond})},
                            {"first_beyond_tolerance", beyond}}}};
  };
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntOperator);
  EXPECT_NE(out->explanation.find("within debug.trace_threshold (0.001)"), std::string::npos) << out->explanation;
  EXPECT_EQ(runner_.Args("msprobe_first_diff").at(0)["user_code"], json::array({"/repo-hunt-"}));
  EXPECT_EQ(runner_.Args("msprobe_first_diff").at(0)["compare_table"], true);  // asked for: compare_output_dir
  for (const json& a : runner_.Args("compare_logs")) {
    EXPECT_EQ(a["probe_tolerance"], json({{"abs", 0.001}})) << a;
  }
  // The table, copied once under msprobe's name for rank 0's result.
  std::vector<fs::path> copies;
  for (const auto& e : fs::directory_iterator(dir_.path() / "compare_out")) copies.push_back(e.path());
  ASSERT_EQ(copies.size(), 1u);
  const std::string name = copies[0].filename().string();
  EXPECT_EQ(name.rfind("compare_result_rank0_", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("compare_result_rank0_20261130123456.csv").size()) << name;
  json doc = HuntJson();
  EXPECT_EQ(doc["hunt"]["compare_output"], copies[0].string());
  EXPECT_EQ(doc["hunt"]["iterations"][0]["probes"]["first_beyond_threshold"]["key"], "p|after|return");
  EXPECT_EQ(doc["hunt"]["iterations"][0]["probes"]["trace_threshold"], 0.001);

}

// Every probe difference within trace_threshold: the first bitwise one is followed, with a
// warning (here an input, so the stack's functions come next).
TEST_F(HuntLoop, DifferencesAllWithinTheTraceThresholdAreStillFollowed) {
  config_.trace_threshold = 0.001;
  json within = Probe("before", "y", "model.py:3", "torch.Tensor");
  within["within_tolerance"] = true;
  runner_.handlers["compare_logs"] = [within](const json& a) -> Result<json> {
    std::string c = a["case"];
    if (c == "hunt_logs") return json{{"verdict", "FAIL"}, {"verdict_reason", "r"}};
    if (c.find("_check") != std::string::npos) return json{{"verdict", "PASS"}, {"verdict_reason", "r"}};
    return json{{"verdict", "INCONCLUSIVE"}, {"verdict_reason", "r"},
                {"probes", {{"matched", 4}, {"divergent_count", 1}, {"beyond_tolerance_count", 0},
                            {"first_divergent", within}, {"next_divergent", json::array()},
                            {"first_beyond_tolerance", nullptr}}}};
  };
  auto all_within = Hunt();
  ASSERT_TRUE(all_within.ok()) << all_within.status().ToString();
  bool warned = false;
  for (const auto& w : all_within->warnings) warned |= w.find("every probe difference is within debug.trace_threshold") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(runner_.Count("inject_prints", "inject"), 4u);  // the statement, then the stack's functions
  ExpectAllReverted();
}

}  // namespace
}  // namespace parity::workflow

namespace parity::workflow {
namespace {

json ArgumentCause(bool traced) {
  json cause = {{"kind", "argument"}, {"rule", "tensor inputs equal, a non-tensor argument differs"},
                {"sentence", "Functional.g.0.forward's tensor inputs are equal on both sides, but its argument "
                             "Functional.g.0.forward.input.1 is 1e-06 in the candidate, 1e-05 in the baseline"},
                {"evidence", json::object()}, {"trace", nullptr}};
  if (traced) {
    cause["trace"] = {{"sentence", "the differing value is set in config.py @@ -11 +11 @@ (an added line holds 1e-06)"},
                      {"hunks", {{{"file", "config.py"}, {"new_start", 11}, {"header", "@@ -11 +11 @@"},
                                  {"lines", {"-    eps: float = 1e-5", "+    eps: float = 1e-6"}},
                                  {"reasons", {"an added line holds 1e-06 (the candidate's value)"}}}}},
                      {"chain", json::array()}};
  }
  return cause;
}

// msprobe: the op's tensor inputs equal, a scalar argument differs, and the value is set in
// another file's hunk; the probes at the line agree (inputs equal, output differs): the hunt
// names the argument and the hunk that set it, not the unchanged line.
TEST_F(HuntLoop, AnArgumentSetElsewhereEndsWithTheHunkThatSetsIt) {
  fd_cause_ = ArgumentCause(true);
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntArgument);
  EXPECT_EQ(HuntExitCode(out), 1);
  EXPECT_EQ(out->located["line"], 3);
  EXPECT_EQ(out->located["hunk"]["file"], "config.py");
  EXPECT_EQ(out->located["hunk_found_by"], "value trace");
  EXPECT_NE(out->explanation.find("every input probed before the statement is equal on both sides"), std::string::npos);
  EXPECT_NE(out->explanation.find("1e-06 in the candidate, 1e-05 in the baseline"), std::string::npos) << out->explanation;
  EXPECT_NE(out->explanation.find("set in config.py @@ -11 +11 @@"), std::string::npos) << out->explanation;
  EXPECT_EQ(HuntJson()["hunt"]["located"]["cause"]["kind"], "argument");
}

// The probes before the statement: only a non-tensor value differs (self.eps), no tensor:
// that value is the answer, with both sides' values, at iteration 1.
TEST_F(HuntLoop, ANonTensorValueBeforeTheStatementIsTheArgument) {
  fd_cause_ = ArgumentCause(false);
  first1_ = Probe("before", "self.eps", "model.py:3", "float");
  first1_["baseline"]["value"] = "1e-05";
  first1_["candidate"]["value"] = "1e-06";
  next1_.push_back(Probe("after", "return", "model.py:3", "torch.Tensor"));
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntArgument);
  EXPECT_EQ(runner_.Count("inject_prints", "inject"), 2u);  // one iteration
  EXPECT_NE(out->explanation.find("the value self.eps differs (1e-06 in the candidate, 1e-05 in the baseline)"),
            std::string::npos) << out->explanation;
}

// The same with a differing tensor before the statement too: the inputs differ, so the
// stack's functions come next.
TEST_F(HuntLoop, ANonTensorValueWithADifferingTensorBeforeTheStatementGoesOnToTheStack) {
  first1_ = Probe("before", "self.eps", "model.py:3", "float");
  next1_ = json::array({Probe("before", "y", "model.py:3", "torch.Tensor")});
  first2_ = Probe("return", "return", "model.py:3", "torch.Tensor");
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntProbe);
  EXPECT_EQ(runner_.Count("inject_prints", "inject"), 4u);
}

// Logs within the tolerance are not "agree": the sentence gives the difference, its step,
// the tolerance and what the printed digits cannot show.
TEST_F(HuntLoop, LogsWithinTheToleranceSayByHowMuchTheyDiffer) {
  config_.tolerance = 0.001;
  log_verdict_ = "PASS";
  logs_report_ = json::parse(R"({"verdict": "PASS", "verdict_reason": "r", "metrics": {
      "loss": {"steps_compared": 2, "bitwise_equal": false, "identical_as_printed": false,
               "max_abs": 8.300000000000096e-05, "max_abs_step": 2, "tolerance": {"abs": 0.001, "rel": null},
               "resolution": 1e-06, "printed_decimals": {"baseline": 6, "candidate": 6}},
      "grad_norm": {"steps_compared": 2, "bitwise_equal": false, "identical_as_printed": true, "max_abs": 0,
                    "max_abs_step": null, "tolerance": {"abs": 0.001, "rel": null}, "resolution": 0.001,
                    "printed_decimals": {"baseline": 3, "candidate": 3}}}})");
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntNoDivergence);
  EXPECT_EQ(out->explanation.find("agree"), std::string::npos) << out->explanation;
  // Two 6-decimal prints differ by a multiple of 1e-06: said in those digits, not as the double.
  EXPECT_NE(out->explanation.find("loss differs by 0.000083 at step 2, within the tolerance abs 0.001"), std::string::npos)
      << out->explanation;
  EXPECT_NE(out->explanation.find("grad_norm is identical as printed at all 2 steps (printed with 3 decimals: a "
                                  "difference below 0.001 cannot show in them)"),
            std::string::npos) << out->explanation;
}

// Instrumented runs equal only as printed, on both sides and in both iterations: one
// warning, in the log format's own terms.
TEST_F(HuntLoop, ThePrintedDigitsWarningIsSaidOnce) {
  first1_ = Probe("before", "y", "model.py:3", "torch.Tensor");
  first2_ = Probe("return", "return", "model.py:3", "torch.Tensor");
  check_as_printed_ = true;
  check_as_printed_report_ = json::parse(R"({"verdict": "INCONCLUSIVE", "verdict_reason": "long per-metric text",
      "baseline": {"format": "megatron"}, "metrics": {
      "lm loss": {"full_precision": false, "printed_decimals": {"baseline": 6, "candidate": 6}},
      "grad norm": {"full_precision": false, "printed_decimals": {"baseline": 3, "candidate": 3}}}})");
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  size_t said = 0;
  for (const std::string& w : out->warnings) {
    if (w.find("as the megatron log prints them") == std::string::npos) continue;
    ++said;
    EXPECT_NE(w.find("grad norm 3 decimals, lm loss 6 decimals"), std::string::npos) << w;
    EXPECT_NE(w.find("--tensorboard-dir"), std::string::npos) << w;
    EXPECT_EQ(w.find("enable_tensorboard"), std::string::npos) << w;
  }
  EXPECT_EQ(said, 1u);
}

// Two md5 dumps the real msprobe made of identical code (its CRC noise in the optimizer),
// logs that cannot decide: msprobe_first_diff finds no divergence, so neither does the hunt.
TEST_F(HuntLoop, AnMd5HuntOnIdenticalCodeEndsWithNoDivergence) {
  const fs::path dumps = fs::path(PARITY_TOY_TRAINER_DIR) / "../../tests/fixtures/msprobe-variants/dumps/baseline";
  dump_from_["baseline"] = dumps / "md5_L1";
  dump_from_["candidate"] = dumps / "md5_L1_rerun";
  real_first_diff_ = true;
  log_verdict_ = "INCONCLUSIVE";
  auto out = Hunt();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->verdict, kHuntNoDivergence) << out->explanation;
  EXPECT_EQ(HuntExitCode(out), 0);
  EXPECT_EQ(runner_.Count("inject_prints", "inject"), 0u);
  json doc = HuntJson();
  EXPECT_FALSE(doc["found"].get<bool>());
  EXPECT_EQ(doc["noise_total"], 33);
}

}  // namespace
}  // namespace parity::workflow
