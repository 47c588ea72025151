// support/policy.h on real folders: symlinks and `..` out of an allowed folder, parity's
// worktree mark, the built-in presets, the environment lists, secrets bound to their
// destinations, the policy file's checks, and the child-environment filter on a real
// child. The expected decisions are the policy's rules applied by hand.
#include "support/policy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "support/child_environment.h"
#include "support/subprocess.h"

namespace parity::policy {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Verdict = Decision::Verdict;

class PolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "parity-policy-XXXXXX").string();
    root_ = mkdtemp(tmpl.data());
    allowed_ = root_ / "allowed";
    outside_ = root_ / "outside";
    fs::create_directories(allowed_ / "scripts");
    fs::create_directories(outside_);
    std::ofstream(allowed_ / "scripts" / "run_train.sh") << "echo\n";
    std::ofstream(outside_ / "secret.txt") << "secret\n";
    policy_.AddFolder(allowed_, true, "test");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_, allowed_, outside_;
  Policy policy_;
};

TEST_F(PolicyTest, PathsInsideAllowedFoldersOnlyWithSymlinksAndDotDotResolved) {
  EXPECT_TRUE(policy_.CheckPath(allowed_ / "scripts" / "run_train.sh", Access::kWrite).allowed());
  EXPECT_TRUE(policy_.CheckPath(allowed_ / "not" / "yet" / "there", Access::kWrite).allowed());
  EXPECT_EQ(policy_.CheckPath(outside_ / "secret.txt", Access::kRead).verdict, Verdict::kRefused);
  EXPECT_EQ(policy_.CheckPath(allowed_ / ".." / "outside" / "secret.txt", Access::kRead).verdict, Verdict::kRefused);
  EXPECT_EQ(policy_.CheckPath("/etc/shadow", Access::kRead).verdict, Verdict::kRefused);
  EXPECT_EQ(policy_.CheckPath("/proc/self/environ", Access::kRead).verdict, Verdict::kRefused);
  // A link inside the allowed folder to a file or folder outside it is outside.
  fs::create_symlink(outside_ / "secret.txt", allowed_ / "link.txt");
  fs::create_directory_symlink(outside_, allowed_ / "linkdir");
  Decision d = policy_.CheckPath(allowed_ / "link.txt", Access::kRead);
  EXPECT_EQ(d.verdict, Verdict::kRefused);
  EXPECT_NE(d.reason.find("resolves to"), std::string::npos) << d.reason;
  EXPECT_EQ(policy_.CheckPath(allowed_ / "linkdir" / "new.json", Access::kWrite).verdict, Verdict::kRefused);
  // A sibling whose name starts with the folder's name is not inside it.
  fs::create_directories(root_ / "allowed-evil");
  EXPECT_EQ(policy_.CheckPath(root_ / "allowed-evil", Access::kRead).verdict, Verdict::kRefused);
  // Read-only folders are not written.
  Policy ro;
  ro.AddFolder(allowed_, false, "test");
  EXPECT_TRUE(ro.CheckPath(allowed_ / "x", Access::kRead).allowed());
  EXPECT_EQ(ro.CheckPath(allowed_ / "x", Access::kWrite).verdict, Verdict::kRefused);
}

TEST_F(PolicyTest, ParityWorktreesOfAnAllowedRepositoryAreAllowedForgedOnesAreNot) {
  // <repo>/.git/worktrees/wt/{parity.json,gitdir} and <repo>-baseline/.git, as git and
  // parity write them (domain/git/worktrees.h).
  fs::path repo = allowed_ / "repo", wt = root_ / "repo-baseline", admin = repo / ".git" / "worktrees" / "wt";
  fs::create_directories(admin);
  fs::create_directories(wt);
  std::ofstream(wt / ".git") << "gitdir: " << admin.string() << "\n";
  std::ofstream(admin / "gitdir") << (wt / ".git").string() << "\n";
  std::ofstream(admin / "parity.json") << R"({"created_by": "parity", "side": "baseline"})";
  Decision d = policy_.CheckPath(wt / "train.py", Access::kWrite);
  EXPECT_TRUE(d.allowed()) << d.reason;
  // A folder that points its .git file at the same admin folder is not that worktree.
  fs::path forged = root_ / "forged";
  fs::create_directories(forged);
  std::ofstream(forged / ".git") << "gitdir: " << admin.string() << "\n";
  EXPECT_EQ(policy_.CheckPath(forged / "x", Access::kRead).verdict, Verdict::kRefused);
  // Without parity's mark it is the user's own worktree, not parity's.
  fs::remove(admin / "parity.json");
  EXPECT_EQ(policy_.CheckPath(wt / "train.py", Access::kRead).verdict, Verdict::kRefused);
}

TEST_F(PolicyTest, PresetsRunOtherCommandsAreAskedWithTheLineThatAllowsThem) {
  RunAction preset{"t", {"bash", "scripts/run_train.sh", "--module", "toy"}, allowed_.string(), {}, "local", false};
  EXPECT_TRUE(policy_.CheckRun(preset).allowed());
  RunAction touch{"t", {"touch", "/tmp/x"}, allowed_.string(), {}, "local", false};
  Decision d = policy_.CheckRun(touch);
  EXPECT_EQ(d.verdict, Verdict::kAsk);
  EXPECT_EQ(d.allow_with, json::parse(R"({"commands": [{"argv": ["touch", "/tmp/x"]}]})"));
  // bash of a script outside the worktree (absolute, ../, or a link out) is no preset.
  fs::create_symlink(outside_ / "secret.txt", allowed_ / "scripts" / "out.sh");
  for (std::string script : {(outside_ / "secret.txt").string(), std::string("../outside/secret.txt"),
                             std::string("scripts/out.sh"), std::string("scripts/missing.sh")}) {
    RunAction a{"t", {"bash", script}, allowed_.string(), {}, "local", false};
    EXPECT_EQ(policy_.CheckRun(a).verdict, Verdict::kAsk) << script;
  }
  // A working folder outside the folders is refused, not asked.
  RunAction elsewhere{"t", {"bash", "scripts/run_train.sh"}, outside_.string(), {}, "local", false};
  EXPECT_EQ(policy_.CheckRun(elsewhere).verdict, Verdict::kRefused);
  // Variables that load code are asked; determinism knobs are not.
  RunAction env = preset;
  env.env = {{"HCCL_DETERMINISTIC", "true"}, {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}};
  EXPECT_TRUE(policy_.CheckRun(env).allowed());
  for (const char* name : {"BASH_ENV", "LD_PRELOAD", "PYTHONPATH", "PYTHONSTARTUP", "NCCL_NET_PLUGIN"}) {
    env.env = {{name, "x"}};
    Decision e = policy_.CheckRun(env);
    EXPECT_EQ(e.verdict, Verdict::kAsk) << name;
    EXPECT_EQ(e.allow_with["env"]["set"], json::array({name}));
  }
  // The user's rules: words, "*", "...".
  policy_.AddCommand({"torchrun", "--nproc_per_node", "*", "train.py", "..."}, "test");
  RunAction torchrun{"t", {"torchrun", "--nproc_per_node", "8", "train.py", "--lr", "1"}, allowed_.string(), {}, "local", false};
  EXPECT_TRUE(policy_.CheckRun(torchrun).allowed());
  torchrun.argv[3] = "evil.py";
  EXPECT_EQ(policy_.CheckRun(torchrun).verdict, Verdict::kAsk);
  // Interpreters for parity's own scripts.
  RunAction probe{"t", {"/usr/bin/python3", "-c", "<probe>"}, "", {}, "local", true};
  EXPECT_TRUE(policy_.CheckRun(probe).allowed());
  probe.argv[0] = "bash";
  EXPECT_EQ(policy_.CheckRun(probe).verdict, Verdict::kAsk);
}

TEST_F(PolicyTest, SecretsGoOnlyWhereThePolicyBindsThem) {
  policy_.AddEndpoint({"https://api.deepseek.com", "DEEPSEEK_API_KEY", "test"});
  policy_.AddMail({"smtp.corp.example", 465, {"*@corp.example"}, "SMTP_PASSWORD", "test"});
  policy_.AddSshHost({"npu01", 22, "me", "NPU_PASSWORD", "test"});
  SendAction llm{SendAction::Kind::kLlm, "t", "https://api.deepseek.com/", "api.deepseek.com", 443, {}, "DEEPSEEK_API_KEY"};
  EXPECT_TRUE(policy_.CheckSend(llm).allowed());
  llm.url = "https://evil.example/v1";
  EXPECT_EQ(policy_.CheckSend(llm).verdict, Verdict::kRefused) << "the key is bound to DeepSeek";
  SendAction mail{SendAction::Kind::kMail, "t", "smtps://smtp.corp.example:465", "smtp.corp.example", 465,
                  {"lead@corp.example"}, "SMTP_PASSWORD"};
  EXPECT_TRUE(policy_.CheckSend(mail).allowed());
  mail.recipients.push_back("someone@evil.example");
  EXPECT_EQ(policy_.CheckSend(mail).verdict, Verdict::kAsk) << "its own server, but a recipient the rule does not list";
  mail.recipients = {"lead@corp.example"};
  mail.secret_env = "DEEPSEEK_API_KEY";
  EXPECT_EQ(policy_.CheckSend(mail).verdict, Verdict::kRefused) << "the API key never goes to a mail server";
  mail = {SendAction::Kind::kMail, "t", "smtp://127.0.0.1:2525", "127.0.0.1", 2525, {"a@b.example"}, ""};
  EXPECT_EQ(policy_.CheckSend(mail).verdict, Verdict::kAsk) << "an unknown server without a secret is asked";
  ConnectAction ssh{"t", "npu01", 22, "me", "NPU_PASSWORD"};
  EXPECT_TRUE(policy_.CheckConnect(ssh).allowed());
  ssh.password_env = "DEEPSEEK_API_KEY";
  EXPECT_EQ(policy_.CheckConnect(ssh).verdict, Verdict::kRefused);
  ssh = {"t", "elsewhere.example", 22, "me", ""};
  EXPECT_EQ(policy_.CheckConnect(ssh).verdict, Verdict::kAsk);
  ssh.password_env = "NPU_PASSWORD";
  EXPECT_EQ(policy_.CheckConnect(ssh).verdict, Verdict::kRefused);
}

TEST_F(PolicyTest, ChildrenInheritTheAllowListWithoutSecrets) {
  policy_.AddEndpoint({"https://api.deepseek.com", "DEEPSEEK_API_KEY", "test"});
  EXPECT_TRUE(policy_.PassesToChild("PATH"));
  EXPECT_TRUE(policy_.PassesToChild("ASCEND_HOME_PATH"));
  EXPECT_TRUE(policy_.PassesToChild("LC_ALL"));
  EXPECT_FALSE(policy_.PassesToChild("DEEPSEEK_API_KEY"));
  EXPECT_FALSE(policy_.PassesToChild("HF_TOKEN"));          // HF_* passes, but it is a token
  EXPECT_FALSE(policy_.PassesToChild("PARITY_HUNT_SSH_PASSWORD_TEST"));
  EXPECT_FALSE(policy_.PassesToChild("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(policy_.PassesToChild("SOME_RANDOM_VARIABLE"));
  policy_.AddEnvPass("HF_TOKEN");  // the user's exact name wins
  EXPECT_TRUE(policy_.PassesToChild("HF_TOKEN"));

  ::setenv("PARITY_POLICY_TEST_API_KEY", "sk-must-not-leak", 1);
  ::setenv("PARITY_POLICY_TEST_PLAIN", "visible", 1);
  InstallChildEnvironment(policy_);
  ProcessOptions o;
  o.argv = {"env"};
  o.env_set = {{"SET_BY_PARITY", "1"}};
  auto r = RunProcess(o);
  SetChildEnvironmentFilter(nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out.find("sk-must-not-leak"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("PARITY_POLICY_TEST_PLAIN=visible"), std::string::npos);  // PARITY_* passes
  EXPECT_NE(r->out.find("SET_BY_PARITY=1"), std::string::npos);
  EXPECT_NE(r->out.find("PATH="), std::string::npos);
}

TEST_F(PolicyTest, ThePolicyFileIsCheckedAndItsRulesApply) {
  fs::path file = root_ / "policy.json";
  std::ofstream(file) << R"({"folders": [{"path": ")" << outside_.string() << R"(", "write": false}],
    "commands": [{"argv": ["make", "train"]}], "env": {"set": ["MY_KNOB"]},
    "mail": [{"host": "smtp.corp.example", "recipients": ["me@corp.example"]}]})";
  ::chmod(file.c_str(), 0600);
  LoadOptions o;
  o.file = file;
  o.working_directory = allowed_;
  auto p = Load(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->CheckPath(outside_ / "secret.txt", Access::kRead).allowed());
  EXPECT_EQ(p->CheckPath(outside_ / "secret.txt", Access::kWrite).verdict, Verdict::kRefused);
  EXPECT_TRUE(p->CheckRun({"t", {"make", "train"}, allowed_.string(), {{"MY_KNOB", "1"}}, "local", false}).allowed());
  json shown = p->ToJson();
  EXPECT_EQ(shown["sources"], json::array({file.string()}));

  ::chmod(file.c_str(), 0666);
  auto writable = Load(o);
  ASSERT_FALSE(writable.ok());
  EXPECT_NE(writable.status().message().find("writable by other users"), std::string::npos);
  ::chmod(file.c_str(), 0600);
  std::ofstream(file) << R"({"folders": [], "allow_everything": true})";
  auto unknown = Load(o);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("allow_everything"), std::string::npos) << unknown.status().ToString();
  std::ofstream(file) << R"({"folders": [{"path": "relative/dir"}]})";
  EXPECT_FALSE(Load(o).ok());
  o.file = root_ / "missing.json";
  EXPECT_EQ(Load(o).status().kind(), ErrorKind::kNotFound);
}

}  // namespace
}  // namespace parity::policy
