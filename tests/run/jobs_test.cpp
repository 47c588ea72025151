// Jobs end to end on this machine with the real toy trainer (real PyTorch): the skill's
// initial-checkpoint flow, both sides loading it, the traps, failures with evidence,
// cancel, timeout, and reading a job back from disk alone.
#include "domain/run/jobs.h"

#include <signal.h>

#include <fstream>
#include <regex>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "domain/run/launch.h"
#include "tests/run/toy_repo.h"

namespace parity::run {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing::ToyRepo;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> Losses(const std::string& log) {
  static const std::regex kLoss(R"(step:\s*\d+\s+(?:\x1b\[[0-9;]*m)?loss:\s*(\S+))");
  std::vector<std::string> out;
  for (std::sregex_iterator it(log.begin(), log.end(), kLoss), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

std::vector<std::string> FindingKinds(const json& view) {
  std::vector<std::string> kinds;
  for (const auto& f : view["findings"]) kinds.push_back(f["kind"]);
  return kinds;
}

class JobsTest : public ::testing::Test {
 protected:
  JobSpec Toy(const std::string& phase, const std::string& side, int steps) {
    return testing::ToyJobSpec(toy_, phase, side, steps);
  }
  JobSpec Argv(std::vector<std::string> argv, std::optional<int> steps = std::nullopt) {
    JobSpec spec;
    spec.side = "candidate";
    spec.config = "script";
    spec.launcher = "argv";
    spec.argv = std::move(argv);
    spec.cwd = toy_.repo().string();
    spec.expected_steps = steps;
    return spec;
  }
  Result<json> RunToEnd(const JobSpec& spec, std::vector<Progress>* progress = nullptr) {
    PARITY_ASSIGN_OR_RETURN(json started, StartJob(*host_, toy_.report(), spec));
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

  ToyRepo toy_;
  std::unique_ptr<Host> host_ = MakeLocalHost();
};

TEST_F(JobsTest, InitialCheckpointThenBothSidesLoadItAndAgreeBitwise) {
  auto gen = RunToEnd(Toy("gen_ckpt", "", 1));
  ASSERT_TRUE(gen.ok()) << gen.status().ToString();
  EXPECT_EQ((*gen)["status"], "ok") << gen->dump(2);
  fs::path ckpt = toy_.report() / "initial_ckpt_toy_small";
  EXPECT_EQ((*gen)["checkpoint"], ckpt.string());
  EXPECT_TRUE(fs::exists(ckpt / "model.safetensors"));
  EXPECT_FALSE(fs::exists(toy_.repo() / "outputs/checkpoint/step-1"));
  EXPECT_THAT(Slurp(toy_.report() / "gen_ckpt_toy_small_train.log"), HasSubstr("step:  1"));

  json entry = LedgerEntry((*gen)["ledger_entry"]);
  EXPECT_EQ(entry["action"], "gen_ckpt");
  EXPECT_EQ(entry["outcome"]["status"], "ok");
  EXPECT_EQ(entry["git"]["commit"], toy_.head());
  EXPECT_EQ(entry["command"]["cwd"], toy_.repo().string());
  EXPECT_EQ(entry["command"]["argv"][1], "scripts/run_train.sh");
  EXPECT_EQ(entry["outputs"]["checkpoint"], "initial_ckpt_toy_small");

  // Regenerating over an existing initial checkpoint is refused, not overwritten.
  auto again = StartJob(*host_, toy_.report(), Toy("gen_ckpt", "", 1));
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("already exists"));

  std::vector<Progress> progress;
  auto base = RunToEnd(Toy("train", "baseline", 6), &progress);
  auto cand = RunToEnd(Toy("train", "candidate", 6));
  ASSERT_TRUE(base.ok() && cand.ok());
  EXPECT_EQ((*base)["status"], "ok") << base->dump(2);
  EXPECT_EQ((*cand)["status"], "ok") << cand->dump(2);
  EXPECT_EQ((*base)["steps"]["last"], 6);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().step, 6);
  EXPECT_EQ(progress.back().total, 6);
  EXPECT_THAT(progress.back().message, HasSubstr("loss"));

  std::string base_log = Slurp(toy_.report() / "baseline_toy_small_train.log");
  std::string cand_log = Slurp(toy_.report() / "candidate_toy_small_train.log");
  EXPECT_THAT(base_log, HasSubstr("initial_ckpt_toy_small"));  // the trainer says what it loaded
  std::vector<std::string> base_loss = Losses(base_log), cand_loss = Losses(cand_log);
  EXPECT_EQ(base_loss.size(), 6u);
  EXPECT_EQ(base_loss, cand_loss);  // same checkpoint, seed, deterministic flags: bitwise

  json train_entry = LedgerEntry((*base)["ledger_entry"]);
  EXPECT_EQ(train_entry["side"], "baseline");
  EXPECT_EQ(train_entry["outcome"]["steps"], 6);
  EXPECT_THAT(train_entry["command"]["argv"].get<std::vector<std::string>>(), Contains("--checkpoint.initial_load_in_hf"));
}

TEST_F(JobsTest, LoadingAMissingCheckpointIsRefusedBeforeRunning) {
  auto r = StartJob(*host_, toy_.report(), Toy("train", "baseline", 3));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("does not exist"));
  EXPECT_FALSE(fs::exists(toy_.report() / "baseline_toy_small_train.log"));
}

TEST_F(JobsTest, DcpMetadataMissingIsCaughtInTheLog) {
  ASSERT_TRUE(RunToEnd(Toy("gen_ckpt", "", 1)).ok());
  // Loading the HF checkpoint without --checkpoint.initial_load_in_hf: torchtitan looks for
  // DCP .metadata and fails with the skill's "AssertionError: metadata is None".
  auto r = RunToEnd(Argv({"bash", "scripts/run_train.sh", "--module", "toy", "--config", "toy_small",
                          "--training.steps=3", "--checkpoint.enable", "--checkpoint.load_only",
                          "--checkpoint.initial_load_path", (toy_.report() / "initial_ckpt_toy_small").string()},
                         3));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_THAT(FindingKinds(*r), Contains("dcp_metadata_missing"));
  Status s = JobFailure(*r);
  EXPECT_THAT(s.ToString(), HasSubstr("metadata is None"));
  EXPECT_THAT(s.ToString(), HasSubstr("scripts/run_train.sh"));
  EXPECT_EQ(LedgerEntry((*r)["ledger_entry"])["outcome"]["status"], "failed");
}

TEST_F(JobsTest, NoneStringFromAScriptIsCaught) {
  // A launcher script of the user's passes the literal None (parity refuses it in its own args).
  testing::Capture({"sh", "-c", "printf '%s\\n' '#!/bin/sh' 'exec bash scripts/run_train.sh \"$@\" "
                                "--checkpoint.enable --checkpoint.initial_load_path None' > scripts/none.sh"},
                   toy_.repo());
  auto r = RunToEnd(Argv({"bash", "scripts/none.sh", "--module", "toy", "--config", "toy_small", "--training.steps=2"}, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_THAT(FindingKinds(*r), Contains("none_string"));
  EXPECT_NE((*r)["exit_code"], 0);
}

TEST_F(JobsTest, ExitCodeErrorsNanAndMissingStepsAreEvidence) {
  auto r = RunToEnd(Argv({"/usr/bin/python3", "-c",
                          "import sys\n"
                          "print('step:  1  loss:  2.50000  grad_norm:  1.0000')\n"
                          "print('step:  2  loss:      nan  grad_norm:      nan')\n"
                          "print('RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB', flush=True)\n"
                          "print('[ERROR] 2025-04-29-18:46:11 (PID:1, Device:1, RankID:-1) ERR00100 PTA call acl api failed')\n"
                          "sys.exit(3)\n"},
                         5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& v = *r;
  EXPECT_EQ(v["status"], "failed");
  EXPECT_EQ(v["exit_code"], 3);
  EXPECT_TRUE(v["signal"].is_null());
  EXPECT_THAT(FindingKinds(v), Contains("npu_oom"));
  EXPECT_THAT(FindingKinds(v), Contains("acl_error"));
  ASSERT_EQ(v["nan_inf"].size(), 2u);
  EXPECT_THAT(v["message"].get<std::string>(), HasSubstr("exit code 3"));
  EXPECT_THAT(v["message"].get<std::string>(), HasSubstr("ran 2 of 5 steps"));
  EXPECT_THAT(v["log_tail"].get<std::string>(), HasSubstr("ERR00100"));
}

TEST_F(JobsTest, KilledBySignalIsReported) {
  auto r = RunToEnd(Argv({"sh", "-c", "echo 'step:  1  loss:  1.0'; kill -SEGV $$"}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["status"], "failed");
  EXPECT_EQ((*r)["signal"], SIGSEGV);
}

TEST_F(JobsTest, CancelKillsTheWholeProcessGroup) {
  JobSpec spec = Argv({"bash", "-c", "for i in $(seq 1 600); do echo \"step: $i  loss:  1.0\"; sleep 0.1; done"});
  auto started = StartJob(*host_, toy_.report(), spec);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string id = (*started)["id"];
  json view;
  for (int i = 0; i < 200; ++i) {
    view = *JobStatus(toy_.report(), id);
    if (!view["steps"]["last"].is_null() && view["steps"]["last"].get<int>() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(view["status"], "running");
  int pid = std::stoi(testing::Capture({"cat", (toy_.report() / "jobs" / id / "pid").string()}));
  auto cancelled = CancelJob(toy_.report(), id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["status"], "cancelled");
  // Nothing of the group is left (bash and its sleep); reaping by init is asynchronous.
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = ::kill(-pid, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone);
  EXPECT_EQ(LedgerEntry((*cancelled)["ledger_entry"])["outcome"]["status"], "cancelled");
}

TEST_F(JobsTest, TimeoutIsEnforcedByTheSupervisor) {
  JobSpec spec = Argv({"sleep", "120"});
  spec.timeout_s = 1;
  auto r = RunToEnd(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["status"], "timeout");
  EXPECT_EQ((*r)["signal"], SIGTERM);
  EXPECT_EQ(LedgerEntry((*r)["ledger_entry"])["outcome"]["status"], "timeout");
}

TEST_F(JobsTest, AJobIsReadBackFromDiskAlone) {
  JobSpec spec = Argv({"sh", "-c", "sleep 1; echo 'step:  1  loss:  1.5'; echo 'step:  2  loss:  1.4'"}, 2);
  auto started = StartJob(*host_, toy_.report(), spec);
  ASSERT_TRUE(started.ok());
  std::string id = (*started)["id"];
  // No host, no memory of the start: everything comes from report_dir/jobs/<id>.
  WaitOptions w;
  w.poll_interval_s = 0.2;
  auto done = WaitJob(toy_.report(), id, w);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ((*done)["status"], "ok") << done->dump(2);
  auto listed = ListJobs(toy_.report());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0]["id"], id);
  EXPECT_EQ((*listed)[0]["status"], "ok");
}

TEST_F(JobsTest, RerunKeepsThePreviousLog) {
  JobSpec spec = Argv({"echo", "first"});
  ASSERT_TRUE(RunToEnd(spec).ok());
  spec.argv = {"echo", "second"};
  auto second = RunToEnd(spec);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(Slurp(toy_.report() / "candidate_script_train.log"), "second\n");
  int logs = 0;
  for (const auto& e : fs::directory_iterator(toy_.report())) {
    if (e.path().filename().string().rfind("candidate_script_train.", 0) == 0) ++logs;
  }
  EXPECT_EQ(logs, 2);
  EXPECT_TRUE(LedgerEntry((*second)["ledger_entry"])["inputs"].contains("previous_log_kept_as"));
}

}  // namespace
}  // namespace parity::run
