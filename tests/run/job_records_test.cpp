// Job records are data (issue 14, "untrusted records"): a report directory may sit in a
// cloned repository that ships a crafted jobs/ folder. Each attack is a real folder and,
// where it matters, a real process or a real listening socket: a record naming a log or a
// checkpoint outside its place, a symlinked log, a pid file naming a process parity did not
// start (and pid 1, checked on the script itself with `kill` recorded instead of sent), a
// record naming an SSH host, a nested record. And what parity writes: job.json 0600,
// environment values by name only.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/run/job_record.h"
#include "domain/run/job_scripts.h"
#include "domain/run/jobs.h"
#include "support/subprocess.h"
#include "tests/run/toy_repo.h"

namespace parity::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ToyRepo;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class JobRecordsTest : public ::testing::Test {
 protected:
  // A record as parity writes one, for a job that looks still running; `edit` changes it.
  json Record(const std::string& id) {
    return {{"schema", kJobSchema}, {"id", id}, {"tool", "run_training"}, {"phase", "train"},
            {"side", "candidate"}, {"config", "x"}, {"launcher", "argv"}, {"host", "local"},
            {"ssh", nullptr}, {"command", {{"argv", {"sleep", "1"}}, {"cwd", toy_.repo().string()}, {"env", json::object()}}},
            {"log", "candidate_x_train.log"}, {"started", "2026-12-01T00:00:00Z"}, {"started_unix", 0},
            {"timeout_s", 0}, {"expected_steps", nullptr}, {"checkpoint_dir", ""}, {"checkpoint_to_move", nullptr},
            {"nonce", "0123456789abcdef0123456789abcdef"}, {"notes", json::array()}};
  }
  void Plant(const json& record, const std::map<std::string, std::string>& files = {}) {
    fs::path dir = toy_.report() / "jobs" / record["id"].get<std::string>();
    fs::create_directories(dir);
    std::ofstream(dir / "job.json") << record.dump();
    for (const auto& [name, text] : files) std::ofstream(dir / name) << text;
  }
  ToyRepo toy_;
};

// Found by file_readers_fuzzer: a field of another type than parity writes (a schema that
// is an object, a Slurm job id that is a number) made json::value throw out of the check.
// Each is now a refusal that names the field, from the status call and the listing alike.
TEST_F(JobRecordsTest, AFieldOfTheWrongTypeIsARefusalNotACrash) {
  const std::vector<std::pair<std::string, json>> edits = {
      {"schema", json::object()}, {"phase", 7}, {"started", 1.5}, {"executor", json::array()},
      {"remote_dir", false}, {"notes", "one note"}, {"slurm", {{"job_id", 42}}}, {"timeout_s", "long"}};
  for (const auto& [key, value] : edits) {
    SCOPED_TRACE(key);
    json r = Record("typed");
    r[key] = value;
    Plant(r);
    auto v = JobStatus(toy_.report(), "typed");
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().kind(), ErrorKind::kFailedPrecondition);
    EXPECT_THAT(v.status().message(), HasSubstr("is not one parity would act on"));
    auto listed = ListJobs(toy_.report());
    ASSERT_TRUE(listed.ok()) << listed.status().ToString();
    fs::remove_all(toy_.report() / "jobs" / "typed");
  }
}

TEST_F(JobRecordsTest, ALogOutsideTheReportDirectoryIsNeverRead) {
  fs::path secret = toy_.root() / "secret.txt";
  std::ofstream(secret) << "Traceback (most recent call last): SECRET-LINE\nERROR SECRET-LINE\n";
  for (std::string log : {secret.string(), std::string("../secret.txt"), std::string("jobs/../../secret.txt")}) {
    SCOPED_TRACE(log);
    json r = Record("evil-log");
    r["log"] = log;
    Plant(r, {{"exit_code", "1"}});
    auto v = JobStatus(toy_.report(), "evil-log");
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().kind(), ErrorKind::kFailedPrecondition);
    EXPECT_THAT(v.status().message(), HasSubstr("\"log\" must be a file name"));
    auto listed = ListJobs(toy_.report());
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->dump().find("SECRET-LINE"), std::string::npos) << listed->dump(2);
  }
  // A well-formed name that is a symlink to the secret: the job is judged without reading it.
  json r = Record("evil-link");
  Plant(r, {{"exit_code", "1"}});
  fs::create_symlink(secret, toy_.report() / "candidate_x_train.log");
  auto v = JobStatus(toy_.report(), "evil-link");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->dump().find("SECRET-LINE"), std::string::npos) << v->dump(2);
  EXPECT_EQ(Slurp(toy_.report() / "jobs" / "evil-link" / "job.json").find("SECRET-LINE"), std::string::npos);
}

TEST_F(JobRecordsTest, ACheckpointToMoveFromOutsideTheWorkingFolderIsRefused) {
  fs::path victim = toy_.root() / "users-project";
  fs::create_directories(victim);
  std::ofstream(victim / "keep.txt") << "mine\n";
  for (std::string from : {std::string("../users-project"), victim.string()}) {
    SCOPED_TRACE(from);
    json r = Record("evil-move");
    r["phase"] = "gen_ckpt";
    r["checkpoint_to_move"] = from;
    r["checkpoint_dir"] = (toy_.root() / "moved-here").string();
    Plant(r, {{"exit_code", "0"}});
    auto v = JobStatus(toy_.report(), "evil-move");
    ASSERT_FALSE(v.ok());
    EXPECT_THAT(v.status().message(), HasSubstr("checkpoint_to_move"));
    EXPECT_EQ(Slurp(victim / "keep.txt"), "mine\n");
    EXPECT_FALSE(fs::exists(toy_.root() / "moved-here"));
  }
}

TEST_F(JobRecordsTest, APidFileNamingAProcessParityDidNotStartGetsNoSignal) {
  // A process group like a training's (its own session), started by the test, not by parity.
  fs::path pidfile = toy_.root() / "foreign.pid";
  ASSERT_EQ(std::system(("setsid sleep 60 > /dev/null 2>&1 < /dev/null & echo $! > " + pidfile.string()).c_str()), 0);
  int pid = std::stoi(Slurp(pidfile));
  ASSERT_EQ(::kill(pid, 0), 0);
  for (std::string nonce : {std::string("0123456789abcdef0123456789abcdef"), std::string("")}) {
    SCOPED_TRACE("nonce '" + nonce + "'");
    json r = Record("evil-pid");
    r["nonce"] = nonce;
    Plant(r, {{"pid", std::to_string(pid) + "\n"}, {"supervisor.pid", std::to_string(pid) + "\n"}});
    auto c = CancelJob(toy_.report(), "evil-pid");
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(c.status().ToString(), HasSubstr("not one parity started for this job"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(::kill(pid, 0), 0) << "the foreign process was signalled";
    // Status does not take the foreign group for the job's own.
    auto s = JobStatus(toy_.report(), "evil-pid");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_NE((*s)["status"], "running");
    fs::remove_all(toy_.report() / "jobs" / "evil-pid");
  }
  ::kill(-pid, SIGKILL);
}

// kCancel itself, with `kill` replaced by a function that records what would be sent: pid
// 1 (every process) and other pid files a record can carry are refused before any signal.
TEST_F(JobRecordsTest, TheCancelScriptSendsNothingForPidOneOrJunk) {
  fs::path dir = toy_.root() / "jobdir";
  for (std::string pid : {"1", "0", "-1", "1 2", "$(touch pwned)", "999999999"}) {
    SCOPED_TRACE(pid);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "pid") << pid << "\n";
    ProcessOptions o;
    std::string recorder = "kill() { echo \"kill $*\" >> \"" + (dir / "kills").string() + "\"; }\n";
    o.argv = {"bash", "-c", recorder + kCancel, "parity-cancel", dir.string(), "1", "0123456789abcdef0123456789abcdef"};
    o.timeout = std::chrono::seconds(60);
    o.cwd = dir;
    auto r = RunProcess(o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->exit_code, 6) << r->out << r->err;
    EXPECT_FALSE(fs::exists(dir / "kills")) << Slurp(dir / "kills");
    EXPECT_FALSE(fs::exists(dir / "pwned"));
    EXPECT_FALSE(fs::exists(dir / "cancel_requested"));
  }
}

TEST_F(JobRecordsTest, AHostNamedOnlyByARecordIsNotContacted) {
  // A listening socket on loopback stands for the host the record names: nothing may connect.
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  json r = Record("evil-host");
  r["host"] = "attacker@127.0.0.1:" + std::to_string(port);
  r["ssh"] = {{"host", "127.0.0.1"}, {"user", "attacker"}, {"port", port}, {"connect_timeout_s", 2}};
  r["remote_dir"] = ".parity/jobs/evil-host";
  Plant(r);
  for (auto call : {+[](const fs::path& d) { return JobStatus(d, "evil-host").status(); },
                    +[](const fs::path& d) { return CancelJob(d, "evil-host").status(); }}) {
    Status s = call(toy_.report());
    EXPECT_EQ(s.kind(), ErrorKind::kFailedPrecondition) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("does not connect to a host named only by a job record"));
  }
  auto listed = ListJobs(toy_.report());
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0]["status"], "unknown");
  // A host that is not the record's is refused too, even a local one.
  std::unique_ptr<Host> local = MakeLocalHost();
  EXPECT_THAT(JobStatus(toy_.report(), "evil-host", local.get()).status().message(), HasSubstr("not on local"));
  // No connection was made.
  timeval none{0, 200000};
  fd_set ready;
  FD_ZERO(&ready);
  FD_SET(listener, &ready);
  EXPECT_EQ(::select(listener + 1, &ready, nullptr, nullptr, &none), 0) << "parity connected to the record's host";
  ::close(listener);
}

TEST_F(JobRecordsTest, ANestedOrMalformedRecordIsAClearError) {
  fs::create_directories(toy_.report() / "jobs" / "deep");
  std::ofstream(toy_.report() / "jobs" / "deep" / "job.json") << std::string(100000, '[') << std::string(100000, ']');
  auto v = JobStatus(toy_.report(), "deep");
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("nesting deeper than"));
  json r = Record("shape");
  r["command"] = "rm -rf /";
  Plant(r);
  EXPECT_THAT(JobStatus(toy_.report(), "shape").status().message(), HasSubstr("no command"));
  EXPECT_EQ(JobStatus(toy_.report(), "../shape").status().kind(), ErrorKind::kInvalidArgument);
}

TEST_F(JobRecordsTest, RecordsArePrivateAndKeepEnvironmentValuesByNameOnly) {
  std::unique_ptr<Host> host = MakeLocalHost();
  JobSpec spec;
  spec.side = "candidate";
  spec.config = "env";
  spec.launcher = "argv";
  spec.argv = {"sh", "-c", "echo \"token=$HF_TOKEN seed=$PYTHONHASHSEED\""};
  spec.cwd = toy_.repo().string();
  spec.env = {{"HF_TOKEN", "hf_SECRET"}, {"PYTHONHASHSEED", "0"}};
  auto started = StartJob(*host, toy_.report(), spec);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WaitOptions w;
  w.poll_interval_s = 0.2;
  auto done = WaitJob(toy_.report(), (*started)["id"], w, host.get());
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ((*done)["status"], "ok") << done->dump(2);
  // The training got the value; no record holds it.
  EXPECT_THAT(Slurp(toy_.report() / "candidate_env_train.log"), HasSubstr("token=hf_SECRET seed=0"));
  fs::path record = toy_.report() / "jobs" / (*started)["id"].get<std::string>() / "job.json";
  EXPECT_EQ(Slurp(record).find("hf_SECRET"), std::string::npos);
  EXPECT_EQ(Slurp(toy_.report() / "manifest.json").find("hf_SECRET"), std::string::npos);
  EXPECT_EQ(done->dump().find("hf_SECRET"), std::string::npos);
  EXPECT_EQ((*done)["command"]["env"], json({{"PYTHONHASHSEED", "0"}}));
  EXPECT_EQ((*done)["command"]["env_unrecorded"], json({"HF_TOKEN"}));
  struct stat st;
  ASSERT_EQ(::stat(record.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  ASSERT_EQ(::stat((toy_.report() / "manifest.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
}

TEST_F(JobRecordsTest, ASymlinkedJobsFolderOrLogIsNotWrittenThrough) {
  std::unique_ptr<Host> host = MakeLocalHost();
  fs::path outside = toy_.root() / "outside";
  fs::create_directories(outside);
  fs::create_directories(toy_.report());
  fs::create_directory_symlink(outside, toy_.report() / "jobs");
  JobSpec spec;
  spec.side = "candidate";
  spec.config = "link";
  spec.launcher = "argv";
  spec.argv = {"echo", "hi"};
  spec.cwd = toy_.repo().string();
  auto started = StartJob(*host, toy_.report(), spec);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(started.status().message(), HasSubstr("is a symlink"));
  EXPECT_TRUE(fs::is_empty(outside));
  fs::remove(toy_.report() / "jobs");
  std::ofstream(outside / "bashrc") << "precious\n";
  fs::create_symlink(outside / "bashrc", toy_.report() / "candidate_link_train.log");
  started = StartJob(*host, toy_.report(), spec);
  ASSERT_FALSE(started.ok());
  EXPECT_THAT(started.status().message(), HasSubstr("not a regular file"));
  EXPECT_EQ(Slurp(outside / "bashrc"), "precious\n");
}

TEST_F(JobRecordsTest, AnInvalidUtf8ByteInTheLogIsKeptVisibleNotAnError) {
  std::unique_ptr<Host> host = MakeLocalHost();
  JobSpec spec;
  spec.side = "candidate";
  spec.config = "bytes";
  spec.launcher = "argv";
  spec.argv = {"sh", "-c", "printf 'Traceback (most recent call last): \\377 boom\\n'; exit 1"};
  spec.cwd = toy_.repo().string();
  auto started = StartJob(*host, toy_.report(), spec);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  WaitOptions w;
  w.poll_interval_s = 0.2;
  auto done = WaitJob(toy_.report(), (*started)["id"], w, host.get());
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ((*done)["status"], "failed");
  std::string dumped = done->dump();  // throws on invalid UTF-8: it must not
  EXPECT_THAT(dumped, HasSubstr("\\\\xFF boom"));
  EXPECT_THAT((*done)["log_tail"].get<std::string>(), HasSubstr("\\xFF boom"));
}

}  // namespace
}  // namespace parity::run
