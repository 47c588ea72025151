// The SSH path against a real sshd on loopback: host-key verification (unknown and changed
// keys refused with the fingerprint), key authentication, commands, the environment probe,
// and jobs run remotely with their log streamed back, surviving a killed connection.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/env/probe.h"
#include "domain/run/host.h"
#include "domain/run/jobs.h"
#include "tests/env/ascend_fixture.h"
#include "tests/run/sshd_fixture.h"
#include "tests/run/toy_repo.h"

namespace parity::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::SshdFixture;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class SshTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(sshd_.ok()) << sshd_.error(); }
  SshdFixture sshd_;
};

TEST_F(SshTest, RunsCommandsWithExitCodesAndEnvironment) {
  auto host = ConnectSsh(sshd_.Target());
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_EQ((*host)->Describe(), "root@127.0.0.1:" + std::to_string(sshd_.port()));
  auto r = (*host)->Exec({"echo", "two words", "it's"}, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "two words it's\n");
  auto fail = (*host)->Exec({"sh", "-c", "echo oops >&2; exit 7"}, {});
  ASSERT_TRUE(fail.ok());
  EXPECT_EQ(fail->exit_code, 7);
  EXPECT_EQ(fail->err, "oops\n");
  ExecOptions o;
  o.env_set = {{"PARITY_PROBE_VAR", "a b"}};
  auto env = (*host)->Exec({"printenv", "PARITY_PROBE_VAR"}, o);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->out, "a b\n");
}

TEST_F(SshTest, UnknownHostKeyIsRefusedWithItsFingerprint) {
  SshTarget t = sshd_.Target();
  t.known_hosts = sshd_.dir() / "empty_known_hosts";
  std::ofstream(*t.known_hosts) << "";
  auto host = ConnectSsh(t);
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().kind(), ErrorKind::kFailedPrecondition);
  std::string fp = sshd_.host_key_fingerprint();  // "256 SHA256:xxxx parity-test-host (ED25519)"
  std::string sha = fp.substr(fp.find("SHA256:"), fp.find(' ', fp.find("SHA256:")) - fp.find("SHA256:"));
  EXPECT_THAT(host.status().message(), HasSubstr(sha));
  EXPECT_THAT(host.status().message(), HasSubstr("not in"));
  EXPECT_THAT(host.status().hint(), HasSubstr("ssh-keyscan"));
}

TEST_F(SshTest, ChangedHostKeyIsRefused) {
  testing::Capture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (sshd_.dir() / "other_key").string()});
  SshTarget t = sshd_.Target();
  t.known_hosts = sshd_.dir() / "changed_known_hosts";
  std::ifstream pub(sshd_.dir() / "other_key.pub");
  std::string key((std::istreambuf_iterator<char>(pub)), std::istreambuf_iterator<char>());
  std::ofstream(*t.known_hosts) << "[127.0.0.1]:" << sshd_.port() << " " << key;
  auto host = ConnectSsh(t);
  ASSERT_FALSE(host.ok());
  EXPECT_THAT(host.status().message(), HasSubstr("does not match"));
  EXPECT_THAT(host.status().message(), HasSubstr("SHA256:"));
  EXPECT_THAT(host.status().hint(), HasSubstr("ssh-keygen -R"));
}

TEST_F(SshTest, AuthenticationFailureSaysWhatWasTried) {
  testing::Capture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (sshd_.dir() / "stranger").string()});
  SshTarget t = sshd_.Target();
  t.identity_file = sshd_.dir() / "stranger";
  auto host = ConnectSsh(t);
  ASSERT_FALSE(host.ok());
  EXPECT_THAT(host.status().message(), HasSubstr("authentication"));
  EXPECT_THAT(host.status().message(), HasSubstr("stranger"));
  t.password_env = "PARITY_TEST_UNSET_PASSWORD_VARIABLE";
  auto with_password = ConnectSsh(t);
  ASSERT_FALSE(with_password.ok());
  EXPECT_THAT(with_password.status().message(), HasSubstr("PARITY_TEST_UNSET_PASSWORD_VARIABLE is not set"));
}

TEST_F(SshTest, ProbeRunsOnTheRemoteHost) {
  testing::AscendFixture fake;
  auto host = ConnectSsh(sshd_.Target());
  ASSERT_TRUE(host.ok());
  env::ProbeOptions o;
  o.search_paths = {fake.ascend().string()};
  o.dev_dir = fake.dev().string();
  o.env = fake.AscendEnv();
  auto r = env::Probe(**host, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["host"], (*host)->Describe());
  EXPECT_EQ((*r)["cann"]["version"], "8.0.0");
  EXPECT_EQ((*r)["npu"]["npu_smi"]["devices"].size(), 2u);
  EXPECT_EQ((*r)["python"]["torch"], testing::PythonSays("import torch; print(torch.__version__)"));
}

class RemoteJobTest : public SshTest {
 protected:
  JobSpec Loop(int steps, double sleep_s) {
    JobSpec spec;
    spec.side = "baseline";
    spec.config = "remote";
    spec.launcher = "argv";
    spec.argv = {"bash", "-c", "for i in $(seq 1 " + std::to_string(steps) + "); do echo \"step: $i  loss:  2.0\"; sleep " +
                                   std::to_string(sleep_s) + "; done"};
    spec.cwd = toy_.repo().string();
    spec.ssh = sshd_.Target();
    spec.remote_job_root = (toy_.root() / "remote-jobs").string();
    spec.expected_steps = steps;
    return spec;
  }
  testing::ToyRepo toy_;
};

TEST_F(RemoteJobTest, ToyTrainingRunsRemotelyAndItsLogIsStreamedBack) {
  auto host = ConnectSsh(sshd_.Target());
  ASSERT_TRUE(host.ok());
  JobSpec spec = Loop(1, 0);
  spec.argv = {"bash", "scripts/run_train.sh", "--module", "toy", "--config", "toy_small", "--training.steps=5",
               "--debug.seed=42", "--debug.deterministic"};
  spec.expected_steps = 5;
  auto started = StartJob(**host, toy_.report(), spec);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_EQ((*started)["host"], (*host)->Describe());
  WaitOptions w;
  w.poll_interval_s = 0.3;
  auto done = WaitJob(toy_.report(), (*started)["id"], w, host->get());
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ((*done)["status"], "ok") << done->dump(2);
  EXPECT_EQ((*done)["steps"]["last"], 5);
  std::string remote_log = Slurp(toy_.root() / "remote-jobs" / (*started)["id"].get<std::string>() / "train.log");
  EXPECT_FALSE(remote_log.empty());
  EXPECT_EQ(Slurp(toy_.report() / "baseline_remote_train.log"), remote_log);
}

TEST_F(RemoteJobTest, KilledConnectionMidRunIsSurvived) {
  auto host = ConnectSsh(sshd_.Target());
  ASSERT_TRUE(host.ok());
  auto started = StartJob(**host, toy_.report(), Loop(30, 0.1));
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  int killed = 0;
  WaitOptions w;
  w.poll_interval_s = 0.2;
  w.on_progress = [&](const Progress& p) {
    if (p.step >= 3 && killed == 0) killed = sshd_.KillConnections();
  };
  auto done = WaitJob(toy_.report(), (*started)["id"], w, host->get());
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_GT(killed, 0);
  EXPECT_GE((*done)["reconnects"].get<int>(), 1);
  EXPECT_EQ((*done)["status"], "ok") << done->dump(2);
  // Every line arrived exactly once despite the broken transfer.
  std::string log = Slurp(toy_.report() / "baseline_remote_train.log");
  std::string expected;
  for (int i = 1; i <= 30; ++i) expected += "step: " + std::to_string(i) + "  loss:  2.0\n";
  EXPECT_EQ(log, expected);
}

TEST_F(RemoteJobTest, RemoteJobIsCancelledAndReadBackOnTheHostTheCallerNames) {
  std::string id;
  {
    auto host = ConnectSsh(sshd_.Target());
    ASSERT_TRUE(host.ok());
    auto started = StartJob(**host, toy_.report(), Loop(600, 0.1));
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    id = (*started)["id"];
  }  // the starting connection is gone; the job is found again on the host the caller names
  auto alone = JobStatus(toy_.report(), id);  // never on the host the record alone names
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.status().kind(), ErrorKind::kFailedPrecondition) << alone.status().ToString();
  auto host = ConnectSsh(sshd_.Target());
  ASSERT_TRUE(host.ok());
  auto status = JobStatus(toy_.report(), id, host->get());
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ((*status)["status"], "running");
  auto cancelled = CancelJob(toy_.report(), id, host->get());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["status"], "cancelled");
}

}  // namespace
}  // namespace parity::run
