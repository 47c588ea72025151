// The slurm executor: settings and batch scripts as units (expected text written by hand),
// the scheduler's lines as printed by the real Slurm 22.05 (captured from the test
// cluster), then jobs on a REAL one-node Slurm cluster on loopback (slurm_fixture.h):
// the toy trainer's checkpoint flow as batch jobs, a failing exit code, a pending job
// cancelled through scancel, a job killed at its time limit with the scheduler's reason,
// ranks under srun with their prefixes, a job followed from its record alone, and
// run_training's plan / refusal without the user's settings.
#include "domain/run/slurm.h"

#include <fstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "domain/run/executor.h"
#include "domain/run/jobs.h"
#include "domain/run/launch.h"
#include "tests/common/fake_tool_context.h"
#include "tests/run/slurm_fixture.h"
#include "tests/run/sshd_fixture.h"
#include "tests/run/toy_repo.h"
#include "tools/run_training/run_training.h"

namespace parity::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string ErrorOf(const json& settings) {
  auto s = ParseSlurmSettings(settings, "slurm.json");
  return s.ok() ? "" : s.status().message();
}

TEST(SlurmSettings, RefusesWhatParityOwnsAndNamesThePath) {
  EXPECT_EQ(ErrorOf({{"partition", "debug"}, {"nodes", 2}, {"sbatch_lines", {"--exclusive", "--constraint=a910"}}}), "");
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"--exclusive", "--output=/tmp/x"}}}),
              HasSubstr("slurm.json.sbatch_lines[1]: \"--output=/tmp/x\": --output is refused"));
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"-p gpu"}}}), HasSubstr("use the key \"partition\""));
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"--time=5"}}}), HasSubstr("time_limit"));
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"--chdir=/"}}}), HasSubstr("--chdir is refused"));
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"exclusive"}}}), HasSubstr("must be an sbatch option"));
  EXPECT_THAT(ErrorOf({{"sbatch_lines", {"--comment=a\nrm -rf /"}}}), HasSubstr("one line"));
  EXPECT_THAT(ErrorOf({{"partition", "a b"}}), HasSubstr("slurm.json.partition"));
  EXPECT_THAT(ErrorOf({{"time_limit", "two hours"}}), HasSubstr("slurm.json.time_limit"));
  EXPECT_THAT(ErrorOf({{"nodes", 0}}), HasSubstr("slurm.json.nodes"));
  EXPECT_THAT(ErrorOf({{"srun", "sometimes"}}), HasSubstr("slurm.json.srun"));
  EXPECT_THAT(ErrorOf({{"partiton", "debug"}}), HasSubstr("partiton"));
}

TEST(SlurmSettings, TimeLimitIsTheSmallerOfSettingsAndTimeout) {
  SlurmSettings s;
  EXPECT_EQ(TimeLimitFor(s, 0), std::nullopt);
  EXPECT_EQ(TimeLimitFor(s, 61), "2");  // whole minutes, rounded up
  s.time_limit = "02:00:00";
  EXPECT_EQ(TimeLimitFor(s, 0), "02:00:00");
  EXPECT_EQ(TimeLimitFor(s, 90), "2");
  EXPECT_EQ(TimeLimitFor(s, 3 * 3600), "02:00:00");
  s.time_limit = "1-00";  // one day
  EXPECT_EQ(TimeLimitFor(s, 25 * 3600), "1-00");
}

TEST(SlurmScript, OneTaskRunsTheCommandItself) {
  SlurmSettings s;
  s.partition = "debug";
  s.account = "proj1";
  s.npus_per_node = 8;
  s.time_limit = "30";
  s.sbatch_lines = {"--exclusive"};
  BatchJob job{"run-1", {"bash", "scripts/run_train.sh", "--config", "it's"}, {{"SEED", "4 2"}}, "/w", "/r/x.log", 0};
  EXPECT_EQ(BatchScript(s, job),
            "#!/bin/bash\n"
            "# parity job run-1: generated from the user's Slurm settings; parity's own options (job name, log, "
            "working directory) are on the sbatch command line.\n"
            "#SBATCH --partition=debug\n"
            "#SBATCH --account=proj1\n"
            "#SBATCH --nodes=1\n"
            "#SBATCH --ntasks-per-node=1\n"
            "#SBATCH --gres=npu:8\n"
            "#SBATCH --time=30\n"
            "#SBATCH --exclusive\n"
            "set -o pipefail\n"
            "export SEED='4 2'\n"
            "exec bash scripts/run_train.sh --config 'it'\\''s'\n");
  auto argv = SbatchArgv(job, "/r/jobs/run-1/batch.sh");
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=parity-run-1", "--output=/r/x.log",
                                             "--open-mode=append", "--chdir=/w", "/r/jobs/run-1/batch.sh"}));
  job.log = "/r/100%/x.log";
  EXPECT_FALSE(SbatchArgv(job, "/b.sh").ok());
}

TEST(SlurmScript, SeveralTasksRunUnderSrunWithRankPrefixes) {
  SlurmSettings s;
  s.nodes = 2;
  s.tasks_per_node = 4;
  s.srun_args = {"--cpu-bind=none"};
  std::string script = BatchScript(s, {"j", {"python3", "train.py"}, {}, "/w", "/l", 0});
  EXPECT_THAT(script, HasSubstr("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n"));
  EXPECT_THAT(script, HasSubstr("export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"));
  EXPECT_THAT(script, HasSubstr("exec srun --kill-on-bad-exit=1 --cpu-bind=none bash -c "));
  EXPECT_THAT(script, HasSubstr("s/^/[rank$SLURM_PROCID]:/"));
  EXPECT_THAT(script, HasSubstr("parity-rank python3 train.py\n"));
  s.srun = "never";
  EXPECT_THAT(BatchScript(s, {"j", {"python3", "train.py"}, {}, "/w", "/l", 0}), HasSubstr("exec python3 train.py\n"));
}

// Lines as the real Slurm 22.05 printed them on the test cluster.
TEST(SlurmState, ReadsSqueueScontrolAndSacct) {
  SlurmState running = ParseSlurmState("RUNNING|None|n1|2026-12-01T21:37:55|0:05|1:00", "", "");
  EXPECT_TRUE(running.live);
  EXPECT_EQ(running.nodes, "n1");
  EXPECT_EQ(running.source, "squeue");
  SlurmState pending = ParseSlurmState("PENDING|BeginTime||N/A|0:00|UNLIMITED", "", "");
  EXPECT_TRUE(pending.live);
  EXPECT_EQ(pending.reason, "BeginTime");

  std::string scontrol =
      "JobId=8 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=1 Nice=0 Account=(null) "
      "QOS=(null) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 "
      "ExitCode=0:15 RunTime=00:01:18 TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-12-01T21:37:55 "
      "EligibleTime=2026-12-01T21:37:55 StartTime=2026-12-01T21:37:55 EndTime=2026-12-01T21:39:13 Partition=debug "
      "NodeList=n1 BatchHost=n1";
  SlurmState timeout = ParseSlurmState("", scontrol, "8|TIMEOUT|0:0|None|n1|2026-12-01T21:37:55|2026-12-01T21:39:13|00:01:18|00:01:00");
  EXPECT_FALSE(timeout.live);
  EXPECT_EQ(timeout.state, "TIMEOUT");
  EXPECT_EQ(timeout.reason, "TimeLimit");
  EXPECT_EQ(timeout.signal, 15);
  EXPECT_EQ(timeout.end, "2026-12-01T21:39:13");
  EXPECT_EQ(timeout.source, "scontrol");

  // The controller forgot the job: accounting still knows it.
  SlurmState cancelled = ParseSlurmState("", "", "9|CANCELLED by 0|0:0|None|n1|2026-12-01T21:37:56|2026-12-01T21:37:58|00:00:02|UNLIMITED");
  EXPECT_EQ(cancelled.state, "CANCELLED");
  EXPECT_EQ(cancelled.state_detail, "CANCELLED by 0");
  EXPECT_EQ(cancelled.source, "sacct");
  SlurmState failed = ParseSlurmState("", "", "4|FAILED|3:0|None|n1|2026-12-01T21:35:34|2026-12-01T21:35:39|00:00:05|UNLIMITED");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.signal, std::nullopt);
  EXPECT_FALSE(ParseSlurmState("", "", "").known);
}

// ---- on a real cluster ---------------------------------------------------------------

class SlurmJobs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto c = testing::SlurmCluster::Start(8);
    if (!c.ok()) {
      start_error_ = new std::string(c.status().ToString());
      return;
    }
    cluster_ = c->release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(cluster_, nullptr) << "the test Slurm cluster did not start: " << (start_error_ ? *start_error_ : "");
    cluster_->WriteSettings({{"partition", "debug"}, {"cpus_per_task", 1}, {"poll_interval_s", 0.5}});
  }

  SlurmSettings Settings(json extra = json::object()) {
    json j = {{"partition", "debug"}, {"cpus_per_task", 1}, {"poll_interval_s", 0.5}};
    j.update(extra);
    auto s = ParseSlurmSettings(j, "test");
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return *s;
  }
  JobSpec Toy(const std::string& phase, const std::string& side, int steps) {
    return testing::ToyJobSpec(toy_, phase, side, steps);
  }
  JobSpec Argv(std::vector<std::string> argv, const std::string& config = "script") {
    JobSpec spec;
    spec.side = "candidate";
    spec.config = config;
    spec.launcher = "argv";
    spec.argv = std::move(argv);
    spec.cwd = toy_.repo().string();
    return spec;
  }
  Result<json> Start(const JobSpec& spec, const SlurmSettings& settings) {
    auto ex = SlurmExecutor(*host_, settings);
    return StartJob(*ex, toy_.report(), spec);
  }
  Result<json> RunToEnd(const JobSpec& spec, const SlurmSettings& settings, std::vector<Progress>* progress = nullptr) {
    PARITY_ASSIGN_OR_RETURN(json started, Start(spec, settings));
    WaitOptions w;
    w.poll_interval_s = 0.2;
    if (progress) w.on_progress = [progress](const Progress& p) { progress->push_back(p); };
    return WaitJob(toy_.report(), started["id"], w, host_.get());
  }
  json LedgerEntry(const std::string& id) {
    auto m = ledger::Read(toy_.report());
    EXPECT_TRUE(m.ok());
    for (const auto& e : (*m)["entries"]) if (e["id"] == id) return e;
    return nullptr;
  }

  static testing::SlurmCluster* cluster_;
  static std::string* start_error_;
  testing::ToyRepo toy_;
  std::unique_ptr<Host> host_ = MakeLocalHost();
};

testing::SlurmCluster* SlurmJobs::cluster_ = nullptr;
std::string* SlurmJobs::start_error_ = nullptr;

TEST_F(SlurmJobs, ToyTrainerCheckpointFlowRunsAsBatchJobs) {
  auto gen = RunToEnd(Toy("gen_ckpt", "", 1), Settings());
  ASSERT_TRUE(gen.ok()) << gen.status().ToString();
  ASSERT_EQ((*gen)["status"], "ok") << gen->dump(2);
  EXPECT_TRUE(fs::exists(toy_.report() / "initial_ckpt_toy_small/model.safetensors"));

  std::vector<Progress> progress;
  auto train = RunToEnd(Toy("train", "baseline", 5), Settings(), &progress);
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  const json& v = *train;
  ASSERT_EQ(v["status"], "ok") << v.dump(2);
  EXPECT_EQ(v["steps"]["last"], 5);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().step, 5);
  const std::string job_id = v["slurm"]["job_id"];
  EXPECT_EQ(job_id.find_first_not_of("0123456789"), std::string::npos) << job_id;
  EXPECT_EQ(v["slurm"]["state"], "COMPLETED");
  EXPECT_EQ(v["slurm"]["nodes"], "n1");
  EXPECT_EQ(v["slurm"]["exit_code"], 0);
  EXPECT_EQ(v["host"], "slurm job " + job_id + " via local");
  // The log Slurm wrote is the training's own, in the report directory.
  EXPECT_THAT(Slurp(toy_.report() / "baseline_toy_small_train.log"), HasSubstr("step:  5"));
  // The batch script is recorded beside the job, and named in the ledger with the job id.
  std::string script = Slurp(toy_.report() / "jobs" / v["id"].get<std::string>() / "batch.sh");
  EXPECT_THAT(script, HasSubstr("#SBATCH --partition=debug\n"));
  EXPECT_THAT(script, HasSubstr("exec bash scripts/run_train.sh --module toy --config toy_small"));
  json entry = LedgerEntry(v["ledger_entry"]);
  EXPECT_EQ(entry["command"]["host"], "slurm job " + job_id + " via local");
  EXPECT_EQ(entry["inputs"]["slurm"]["job_id"], job_id);
  EXPECT_EQ(entry["inputs"]["slurm"]["batch_script_text"], script);
  EXPECT_EQ(entry["outcome"]["status"], "ok");
  EXPECT_EQ(entry["outcome"]["slurm"]["state"], "COMPLETED");
  // The scheduler's own accounting agrees.
  EXPECT_EQ(cluster_->Sacct(job_id, "State,ExitCode,NodeList"), "COMPLETED|0:0|n1");
}

TEST_F(SlurmJobs, FailingExitCodeIsReportedWithTheSchedulersState) {
  auto v = RunToEnd(Argv({"bash", "-c", "echo about to fail; exit 3"}), Settings());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["status"], "failed") << v->dump(2);
  EXPECT_EQ((*v)["exit_code"], 3);
  EXPECT_THAT((*v)["message"].get<std::string>(), HasSubstr("exit code 3"));
  EXPECT_EQ((*v)["slurm"]["state"], "FAILED");
  Status failure = JobFailure(*v);
  EXPECT_THAT(failure.ToString(), HasSubstr((*v)["slurm"]["job_id"].get<std::string>()));
  EXPECT_THAT((*v)["log_tail"].get<std::string>(), HasSubstr("about to fail"));
}

TEST_F(SlurmJobs, PendingJobShowsItsReasonAndCancelReachesScancel) {
  // --begin holds the job in the queue: the scheduler says why it is not running.
  auto started = Start(Argv({"bash", "-c", "echo never; sleep 600"}), Settings({{"sbatch_lines", {"--begin=now+3600"}}}));
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string id = (*started)["id"];
  auto pending = JobStatus(toy_.report(), id);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  EXPECT_EQ((*pending)["status"], "running");
  EXPECT_THAT((*pending)["message"].get<std::string>(), HasSubstr("PENDING (BeginTime)"));
  EXPECT_EQ((*pending)["slurm"]["state"], "PENDING");
  const std::string job_id = (*pending)["slurm"]["job_id"];

  auto cancelled = CancelJob(toy_.report(), id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["status"], "cancelled") << cancelled->dump(2);
  EXPECT_THAT((*cancelled)["message"].get<std::string>(), HasSubstr("scancel " + job_id));
  EXPECT_THAT(cluster_->Sacct(job_id, "State"), HasSubstr("CANCELLED"));
}

TEST_F(SlurmJobs, RunningJobCancelledThroughScancel) {
  auto started = Start(Argv({"bash", "-c", "echo started; sleep 600"}), Settings());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string id = (*started)["id"];
  for (int i = 0; i < 300; ++i) {  // until the scheduler runs it
    auto v = JobStatus(toy_.report(), id);
    ASSERT_TRUE(v.ok());
    if ((*v)["slurm"].value("state", "") == "RUNNING") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  auto cancelled = CancelJob(toy_.report(), id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["status"], "cancelled") << cancelled->dump(2);
  EXPECT_EQ((*cancelled)["signal"], 15);
  EXPECT_THAT(cluster_->Sacct((*cancelled)["slurm"]["job_id"], "State"), HasSubstr("CANCELLED"));
}

TEST_F(SlurmJobs, TimeLimitKillIsReportedWithTheSchedulersReason) {
  JobSpec spec = Argv({"bash", "-c", "echo working; sleep 600"});
  spec.timeout_s = 1;  // --time=1: Slurm's limits are whole minutes
  auto v = RunToEnd(spec, Settings());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["status"], "timeout") << v->dump(2);
  std::string message = (*v)["message"];
  EXPECT_THAT(message, HasSubstr("time limit"));
  EXPECT_THAT(message, HasSubstr("TIMEOUT"));
  EXPECT_THAT(message, HasSubstr("TimeLimit"));
  EXPECT_EQ((*v)["slurm"]["state"], "TIMEOUT");
  EXPECT_THAT(Slurp((*v)["log_path"].get<std::string>()), HasSubstr("DUE TO TIME LIMIT"));
  EXPECT_EQ(cluster_->Sacct((*v)["slurm"]["job_id"], "State"), "TIMEOUT");
}

TEST_F(SlurmJobs, RanksUnderSrunAreCollectedWithTheirPrefixes) {
  auto v = RunToEnd(Argv({"bash", "-c", "echo \"hello from $RANK of $WORLD_SIZE\""}),
                    Settings({{"tasks_per_node", 2}}));
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["status"], "ok") << v->dump(2);
  std::string log = Slurp((*v)["log_path"].get<std::string>());
  EXPECT_THAT(log, HasSubstr("[rank0]:hello from 0 of 2\n"));
  EXPECT_THAT(log, HasSubstr("[rank1]:hello from 1 of 2\n"));
}

TEST_F(SlurmJobs, JobIsFollowedFromItsRecordAlone) {
  auto started = Start(Argv({"bash", "-c", "sleep 2; echo done"}), Settings());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_EQ((*started)["status"], "running");
  EXPECT_THAT((*started)["message"].get<std::string>(),
              HasSubstr("submitted as Slurm job " + (*started)["slurm"]["job_id"].get<std::string>()));
  // No executor, no host, no settings: what a restarted parity has.
  WaitOptions w;
  w.poll_interval_s = 0.2;
  auto v = WaitJob(toy_.report(), (*started)["id"], w);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["status"], "ok") << v->dump(2);
  EXPECT_EQ((*v)["slurm"]["state"], "COMPLETED");
  auto listed = ListJobs(toy_.report());
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0]["slurm"]["job_id"], (*v)["slurm"]["job_id"]);
}

TEST_F(SlurmJobs, SubmittedOverSshFromALoginNode) {
  // The login node is a real sshd on loopback whose sessions have SLURM_CONF (a cluster's
  // login node has its slurm.conf): sbatch, squeue and sacct run there over SSH, the job
  // folder is made there, and the log comes back into the local report directory.
  testing::SshdFixture login("SetEnv SLURM_CONF=" + (cluster_->dir() / "slurm.conf").string() + "\n");
  ASSERT_TRUE(login.ok()) << login.error();
  auto host = ConnectSsh(login.Target());
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  JobSpec spec = Argv({"bash", "-c", "echo submitted through the login node; echo SLURM_JOB_ID=$SLURM_JOB_ID"});
  spec.ssh = login.Target();
  spec.remote_job_root = (login.dir() / "jobs").string();
  auto ex = SlurmExecutor(**host, Settings());
  auto started = StartJob(*ex, toy_.report(), spec);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  const std::string job_id = (*started)["slurm"]["job_id"];
  EXPECT_EQ((*started)["slurm"]["submit_host"], (*host)->Describe()) << started->dump(2);
  WaitOptions w;
  w.poll_interval_s = 0.2;
  auto v = WaitJob(toy_.report(), (*started)["id"], w, host->get());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)["status"], "ok") << v->dump(2);
  EXPECT_EQ((*v)["slurm"]["state"], "COMPLETED") << v->dump(2);
  std::ifstream log(toy_.report() / (*v)["log"].get<std::string>());
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("submitted through the login node"));
  EXPECT_THAT(text, HasSubstr("SLURM_JOB_ID=" + job_id));
  // The job's folder is on the login node's side, where remote_job_root says.
  EXPECT_TRUE(fs::exists(login.dir() / "jobs")) << v->dump(2);
}

TEST_F(SlurmJobs, RunTrainingToolPlansFromTheUsersSettingsOnly) {
  testing::FakeContext ctx(toy_.report());
  json args = {{"action", "plan"},  {"executor", "slurm"},  {"worktree", toy_.repo().string()},
               {"model", "toy"},    {"config", "toy_small"}, {"side", "baseline"}, {"steps", 3}};
  auto plan = tools::MakeRunTrainingTool().handler(args, ctx);
  ASSERT_FALSE(plan.is_error) << plan.content.dump();
  EXPECT_THAT(plan.structured["plan"]["batch_script"].get<std::string>(), HasSubstr("#SBATCH --partition=debug\n"));
  // Settings cannot come through the arguments.
  args["slurm"] = {{"partition", "other"}};
  auto refused = tools::MakeRunTrainingTool().handler(args, ctx);
  ASSERT_TRUE(refused.is_error);
  EXPECT_THAT(refused.structured["error"]["message"].get<std::string>(), HasSubstr("arguments.slurm"));
  // Without the user's file the slurm executor is refused, naming the file.
  fs::remove(cluster_->dir() / "xdg/parity/slurm.json");
  args.erase("slurm");
  auto missing = tools::MakeRunTrainingTool().handler(args, ctx);
  ASSERT_TRUE(missing.is_error);
  EXPECT_THAT(missing.structured["error"]["message"].get<std::string>(), HasSubstr("xdg/parity/slurm.json"));
}

}  // namespace
}  // namespace parity::run
