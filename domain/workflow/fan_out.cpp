#include "domain/workflow/fan_out.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace parity::workflow {

using nlohmann::json;

namespace {

// run_training reports a job that ended badly as an error whose structured result (kept by
// the StepRunner as the "result" evidence) still holds the job's view.
json JobOfError(const Status& s) {
  for (const auto& e : s.evidence()) {
    if (e.name != "result") continue;
    json r = json::parse(e.value, nullptr, false);
    if (r.is_object() && r.contains("job") && r["job"].is_object() && r["job"].contains("status")) return r["job"];
  }
  return nullptr;
}

struct Flight {
  size_t index;
  std::string job_id;
  std::string last_message;
  int64_t noted_decile = -1;
  bool noted_start = false;
};

class Runner {
 public:
  Runner(const std::vector<PlannedRun>& runs, const FanOutOptions& o, StepRunner& r, PipelineObserver& obs)
      : runs_(runs), o_(o), run_(r), obs_(obs), out_(runs.size()) {}

  Result<std::vector<RunOutcome>> Run() {
    std::vector<bool> started(runs_.size(), false);
    while (true) {
      if (o_.cancel.cancelled() && !cancelled_) CancelFlights();
      // Skip what can never start, start what may, within the limit, in plan order.
      for (size_t i = 0; i < runs_.size(); ++i) {
        if (started[i]) continue;
        if (stopping_) break;
        if (runs_[i].after) {
          const RunOutcome& dep = out_[*runs_[i].after];
          if (!started[*runs_[i].after] || dep.status == "not_started" || InFlight(*runs_[i].after)) continue;
          if (dep.status != "ok") {
            started[i] = true;
            out_[i].status = "skipped";
            out_[i].error = FailedPrecondition(runs_[i].label + " was not started: " + runs_[*runs_[i].after].label +
                                               " did not end ok (" + dep.status + ")");
            obs_.Note(out_[i].error.message());
            continue;
          }
        }
        if (flights_.size() >= o_.max_parallel) break;
        started[i] = true;
        Start(i);
      }
      if (flights_.empty()) break;
      // An executor may ask to be polled less often (a scheduler: the user's poll_interval_s).
      double interval = o_.poll_interval_s;
      for (const auto& f : flights_) {
        const json& job = out_[f.index].job;
        if (job.is_object() && job.value("poll_after_s", json()).is_number()) {
          interval = std::max(interval, job["poll_after_s"].get<double>());
        }
      }
      // Slept in slices so that a cancel reaches the trainings at once.
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
      while (!o_.cancel.cancelled() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (o_.cancel.cancelled() && !cancelled_) CancelFlights();
      PARITY_RETURN_IF_ERROR(PollAll());
    }
    for (size_t i = 0; i < runs_.size(); ++i) {
      if (!started[i]) {
        out_[i].error = Cancelled(runs_[i].label + " was not started: " +
                                  (cancelled_ ? "the run was cancelled" : "stopped at the first failure"));
      }
    }
    if (cancelled_) {
      Status s = Cancelled("cancelled: every training still going was stopped");
      if (!cancelled_jobs_.empty()) s.WithEvidence("cancelled_jobs", cancelled_jobs_);
      return s;
    }
    return out_;
  }

 private:
  bool InFlight(size_t i) const {
    for (const auto& f : flights_) {
      if (f.index == i) return true;
    }
    return false;
  }

  void Start(size_t i) {
    json args = runs_[i].args;
    args["action"] = "start";
    args["wait"] = false;
    auto started = run_.Call("run_training", args);
    if (!started.ok()) {
      Ended(i, "error", JobOfError(started.status()), std::move(started).take_status());
      return;
    }
    const json& job = (*started)["job"];
    obs_.Note(runs_[i].label + ": started job " + job.value("id", "?") + " (" + job.value("host", "?") + ")");
    flights_.push_back({i, job.value("id", ""), "", -1, false});
    out_[i].job = job;
    out_[i].environment = started->value("environment", json::object());
  }

  Status PollAll() {
    for (size_t k = 0; k < flights_.size();) {
      Flight& f = flights_[k];
      json args = {{"action", "status"}, {"job_id", f.job_id}};
      if (runs_[f.index].args.contains("report_dir")) args["report_dir"] = runs_[f.index].args["report_dir"];
      auto status = run_.Call("run_training", args);
      json job = status.ok() ? (*status)["job"] : JobOfError(status.status());
      if (job.is_null()) {
        return std::move(status).take_status().Context("following " + runs_[f.index].label + " (job " + f.job_id + ")");
      }
      out_[f.index].job = job;
      if (job.value("status", "") == "running") {
        NoteProgress(f, job);
        ++k;
        continue;
      }
      size_t index = f.index;
      flights_.erase(flights_.begin() + static_cast<std::ptrdiff_t>(k));
      Ended(index, job.value("status", "failed"), job, status.ok() ? Status::Ok() : std::move(status).take_status());
    }
    return Status::Ok();
  }

  void NoteProgress(Flight& f, const json& job) {
    const std::string& label = runs_[f.index].label;
    const json& steps = job.value("steps", json::object());
    if (steps.value("last", json()).is_number() && steps.value("expected", json()).is_number() &&
        steps["expected"].get<int64_t>() > 0) {
      int64_t decile = steps["last"].get<int64_t>() * 10 / steps["expected"].get<int64_t>();
      if (decile > f.noted_decile) {
        f.noted_decile = decile;
        f.noted_start = true;
        obs_.Note(label + ": " + job.value("message", ""));
      }
      return;
    }
    // No step yet: say when the state changes (queued with its reason, then running).
    std::string message = job.value("message", "");
    if (message != f.last_message) {
      f.last_message = message;
      obs_.Note(label + ": " + message);
    }
  }

  void Ended(size_t i, const std::string& status, const json& job, Status error) {
    RunOutcome& o = out_[i];
    o.status = status;
    if (!job.is_null()) o.job = job;
    Status taken = o_.on_end ? o_.on_end(i, o.job, status == "ok") : Status::Ok();
    if (status == "ok" && taken.ok()) {
      obs_.Note(runs_[i].label + ": " + job.value("message", "ok"));
      return;
    }
    if (status == "ok") {
      o.status = "error";  // it trained, but what it left cannot be taken
      error = std::move(taken);
    } else if (!taken.ok()) {
      obs_.Note(runs_[i].label + ": " + taken.message());
    }
    o.error = error.ok() ? FailedPrecondition(runs_[i].label + " ended " + status) : std::move(error);
    obs_.Note(runs_[i].label + ": " + o.status + " — " + o.error.message());
    if (o_.stop_at_first_failure && !stopping_) {
      stopping_ = true;
      for (const auto& f : flights_) {
        obs_.Note(runs_[f.index].label + ": cancelling (stop at the first failure)");
        (void)CancelJob(f);  // its end is read by the next poll
      }
    }
  }

  Result<json> CancelJob(const Flight& f) {
    json args = {{"action", "cancel"}, {"job_id", f.job_id}};
    if (runs_[f.index].args.contains("report_dir")) args["report_dir"] = runs_[f.index].args["report_dir"];
    return run_.Call("run_training", args);
  }

  // The user's cancel: no new run starts, and every run still going is cancelled (what
  // could not be is named in the error).
  void CancelFlights() {
    cancelled_ = true;
    stopping_ = true;
    for (const auto& f : flights_) {
      obs_.Note(runs_[f.index].label + ": cancelling job " + f.job_id);
      auto done = CancelJob(f);
      cancelled_jobs_ += f.job_id + (done.ok() ? "" : " (not cancelled: " + done.status().message() + ")") + "\n";
    }
  }

  const std::vector<PlannedRun>& runs_;
  const FanOutOptions& o_;
  StepRunner& run_;
  PipelineObserver& obs_;
  std::vector<RunOutcome> out_;
  std::vector<Flight> flights_;
  bool stopping_ = false;
  bool cancelled_ = false;
  std::string cancelled_jobs_;
};

}  // namespace

Result<std::vector<RunOutcome>> FanOut(const std::vector<PlannedRun>& runs, const FanOutOptions& options,
                                       StepRunner& runner, PipelineObserver& observer) {
  if (options.max_parallel < 1) return InvalidArgument("max_parallel must be at least 1");
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].after && *runs[i].after >= i) return Internal("fan-out: run " + runs[i].label + " depends on a later run");
  }
  return Runner(runs, options, runner, observer).Run();
}

Status FanOutFailure(const std::vector<PlannedRun>& runs, const std::vector<RunOutcome>& outcomes) {
  std::vector<size_t> bad;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].status != "ok") bad.push_back(i);
  }
  if (bad.empty()) return Status::Ok();
  // The first real failure carries the evidence; skipped and never-started runs follow from it.
  size_t first = bad[0];
  for (size_t i : bad) {
    if (outcomes[i].status != "skipped" && outcomes[i].status != "not_started") {
      first = i;
      break;
    }
  }
  const Status& cause = outcomes[first].error;
  std::string list;
  for (size_t i : bad) {
    list += runs[i].label + ": " + outcomes[i].status + (outcomes[i].job.is_object() ? " (job " + outcomes[i].job.value("id", "?") + ")" : "") +
            " — " + outcomes[i].error.message() + "\n";
  }
  Status s(cause.ok() ? ErrorKind::kUnavailable : cause.kind(),
           std::to_string(bad.size()) + " of " + std::to_string(runs.size()) + " training run(s) did not end ok; first: " +
               runs[first].label + ": " + cause.message());
  if (!cause.hint().empty()) s.WithHint(cause.hint());
  for (const auto& e : cause.evidence()) s.WithEvidence(e.name, e.value);
  s.WithEvidence("runs", list);
  return s;
}

}  // namespace parity::workflow
