// The fan-out's scheduling over a scripted run_training: the order runs start in, the
// limit, dependencies, a failure that lets the others go on, and stop-at-first-failure.
// The runner answers as the in-process tool runner does: start and status return
// {"job": view}; a job that ended badly is an error whose "result" evidence holds the view.
#include "domain/workflow/fan_out.h"
#include "domain/workflow/premerge_config.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace parity::workflow {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ScriptedJobs : public StepRunner {
 public:
  // label -> (polls until it ends, final status)
  std::map<std::string, std::pair<int, std::string>> script;
  std::vector<std::string> events;  // "start X", "end X", "cancel X"
  size_t max_running = 0;

  Result<json> Call(const std::string& tool, const json& args) override {
    EXPECT_EQ(tool, "run_training");
    std::string action = args.value("action", "");
    if (action == "start") {
      EXPECT_EQ(args["wait"], false);
      std::string label = args["config"];
      std::string id = "job-" + label;
      jobs_[id] = {label, script[label].first, script[label].second};
      events.push_back("start " + label);
      max_running = std::max(max_running, Running());
      return json{{"job", View(id, "running")}};
    }
    std::string id = args["job_id"];
    Job& j = jobs_.at(id);
    if (action == "cancel") {
      events.push_back("cancel " + j.label);
      j.polls_left = 0;
      j.end = "cancelled";
      return json{{"job", View(id, "cancelled")}};
    }
    if (j.polls_left > 0 && --j.polls_left > 0) return json{{"job", View(id, "running")}};
    if (!j.ended) events.push_back("end " + j.label);
    j.ended = true;
    if (j.end == "ok") return json{{"job", View(id, "ok")}};
    return Status(ErrorKind::kUnavailable, "training job " + id + " " + j.end + ": exit code 3")
        .WithEvidence("result", json{{"job", View(id, j.end)}}.dump());
  }

 private:
  struct Job {
    std::string label;
    int polls_left;
    std::string end;
    bool ended = false;
  };
  size_t Running() const {
    size_t n = 0;
    for (const auto& [id, j] : jobs_) n += j.ended ? 0 : 1;
    return n;
  }
  json View(const std::string& id, const std::string& status) {
    return {{"id", id}, {"status", status}, {"host", "local"}, {"message", status}, {"steps", json::object()}};
  }
  std::map<std::string, Job> jobs_;
};

class Silent : public PipelineObserver {
 public:
  void Step(size_t, size_t, std::string_view) override {}
  void Note(std::string_view line) override { notes.emplace_back(line); }
  std::vector<std::string> notes;
};

// A premerge's shape: per config a checkpoint, then two runs that need it.
std::vector<PlannedRun> Plan() {
  std::vector<PlannedRun> plan;
  for (std::string c : {"a", "b"}) {
    size_t ckpt = plan.size();
    plan.push_back({c + "-ckpt", {{"config", c + "-ckpt"}}, std::nullopt});
    plan.push_back({c + "-base", {{"config", c + "-base"}}, ckpt});
    plan.push_back({c + "-cand", {{"config", c + "-cand"}}, ckpt});
  }
  return plan;
}

TEST(FanOut, OneAtATimeRunsInPlanOrder) {
  ScriptedJobs jobs;
  for (const auto& r : Plan()) jobs.script[r.label] = {2, "ok"};
  Silent obs;
  auto out = FanOut(Plan(), {1, false, 0.0}, jobs, obs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(jobs.events, ElementsAre("start a-ckpt", "end a-ckpt", "start a-base", "end a-base", "start a-cand",
                                       "end a-cand", "start b-ckpt", "end b-ckpt", "start b-base", "end b-base",
                                       "start b-cand", "end b-cand"));
  EXPECT_EQ(jobs.max_running, 1u);
  EXPECT_TRUE(FanOutFailure(Plan(), *out).ok());
}

TEST(FanOut, SideBySideWithinTheLimitAfterTheirCheckpoint) {
  ScriptedJobs jobs;
  for (const auto& r : Plan()) jobs.script[r.label] = {3, "ok"};
  Silent obs;
  auto out = FanOut(Plan(), {16, false, 0.0}, jobs, obs);
  ASSERT_TRUE(out.ok());
  // Both checkpoints at once, then all four runs at once.
  EXPECT_THAT(std::vector<std::string>(jobs.events.begin(), jobs.events.begin() + 2),
              ElementsAre("start a-ckpt", "start b-ckpt"));
  EXPECT_EQ(jobs.max_running, 4u);
  for (const auto& o : *out) EXPECT_EQ(o.status, "ok");

  ScriptedJobs limited;
  for (const auto& r : Plan()) limited.script[r.label] = {3, "ok"};
  ASSERT_TRUE(FanOut(Plan(), {3, false, 0.0}, limited, obs).ok());
  EXPECT_EQ(limited.max_running, 3u);
}

TEST(FanOut, AFailureIsKeptAndTheOthersGoOn) {
  ScriptedJobs jobs;
  for (const auto& r : Plan()) jobs.script[r.label] = {2, "ok"};
  jobs.script["a-ckpt"] = {2, "failed"};
  jobs.script["b-base"] = {1, "timeout"};
  Silent obs;
  auto out = FanOut(Plan(), {16, false, 0.0}, jobs, obs);
  ASSERT_TRUE(out.ok());
  std::vector<std::string> statuses;
  for (const auto& o : *out) statuses.push_back(o.status);
  EXPECT_THAT(statuses, ElementsAre("failed", "skipped", "skipped", "ok", "timeout", "ok"));
  EXPECT_THAT((*out)[1].error.message(), HasSubstr("a-ckpt did not end ok (failed)"));
  Status s = FanOutFailure(Plan(), *out);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("4 of 6 training run(s) did not end ok; first: a-ckpt"));
  bool listed = false;
  for (const auto& e : s.evidence()) listed |= e.name == "runs" && e.value.find("b-base: timeout (job job-b-base)") != std::string::npos;
  EXPECT_TRUE(listed);
}

TEST(FanOut, StopAtFirstFailureCancelsTheRest) {
  ScriptedJobs jobs;
  for (const auto& r : Plan()) jobs.script[r.label] = {5, "ok"};
  jobs.script["b-ckpt"] = {1, "failed"};
  Silent obs;
  auto out = FanOut(Plan(), {16, true, 0.0}, jobs, obs);
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(jobs.events, ElementsAre("start a-ckpt", "start b-ckpt", "end b-ckpt", "cancel a-ckpt", "end a-ckpt"));
  EXPECT_EQ((*out)[0].status, "cancelled");
  EXPECT_EQ((*out)[3].status, "failed");
  EXPECT_EQ((*out)[1].status, "not_started");
  EXPECT_THAT((*out)[1].error.message(), HasSubstr("stopped at the first failure"));
}

// premerge.json's fan-out keys: the defaults follow the executor, errors name the path.
TEST(FanOut, PremergeConfigKeys) {
  json base = {{"baseline", "main"}};
  auto local = ParsePremergeConfig(base, "premerge.json", "/b");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->executor, "local");
  EXPECT_EQ(local->max_parallel, 1);
  EXPECT_FALSE(local->stop_at_first_failure);
  json slurm = base;
  slurm["executor"] = "slurm";
  EXPECT_EQ(ParsePremergeConfig(slurm, "premerge.json", "/b")->max_parallel, 16);
  slurm["max_parallel"] = 4;
  slurm["stop_at_first_failure"] = true;
  auto four = ParsePremergeConfig(slurm, "premerge.json", "/b");
  EXPECT_EQ(four->max_parallel, 4);
  EXPECT_TRUE(four->stop_at_first_failure);
  slurm["max_parallel"] = 0;
  EXPECT_THAT(ParsePremergeConfig(slurm, "premerge.json", "/b").status().message(), HasSubstr("premerge.json.max_parallel"));
  json bad = base;
  bad["executor"] = "pbs";
  EXPECT_THAT(ParsePremergeConfig(bad, "premerge.json", "/b").status().message(), HasSubstr("premerge.json.executor"));
}

}  // namespace
}  // namespace parity::workflow
