// Fan-out: a set of trainings run through run_training, several at once. Each run is
// started without waiting (run_training start, wait false) once the run it depends on has
// ended ok, at most `max_parallel` at a time, and followed with run_training status until
// it ends, with a note per run as it moves (queued, running, every tenth of its steps,
// ended). It is the same whatever the executor: locally with max_parallel 1 the runs go one
// after another in plan order, as they always did; on Slurm they are queued together and
// the scheduler runs them side by side.
//
// A run that fails is kept with its evidence and the others go on (those that depend on
// it are skipped, saying why), unless stop_at_first_failure: then the runs still going are
// cancelled and no new one starts. When `cancel` fires (the user's Ctrl-C, an MCP cancel),
// every run still going is cancelled (run_training cancel: SIGTERM), followed until it has
// ended, and the fan-out is a kCancelled error naming them.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/pipeline.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct PlannedRun {
  std::string label;            // "toy_small baseline": how notes and errors name it
  nlohmann::json args;          // run_training start arguments (wait is forced to false)
  std::optional<size_t> after;  // index of the run that must end ok before this one starts
};

struct RunOutcome {
  // ok | failed | cancelled | timeout | lost (the job's) | skipped | not_started | error
  // (run_training refused to start it)
  std::string status = "not_started";
  nlohmann::json job;  // the last view of the job (null when none was started)
  nlohmann::json environment = nlohmann::json::object();  // run_training start's probe ({} when not probed)
  Status error;        // why it is not ok, with the tool's evidence
};

struct FanOutOptions {
  size_t max_parallel = 1;
  bool stop_at_first_failure = false;
  double poll_interval_s = 1.0;
  CancellationToken cancel;  // checked between polls, every 50 ms
  // Called with a run's plan index and last job view when it ends (ok: whether it ended
  // ok), before any later run starts (with max_parallel 1, before the next one): to take or
  // discard what the run left in its folder. An error makes an ok run's outcome "error"
  // with that status.
  std::function<Status(size_t, const nlohmann::json& job, bool ok)> on_end;
};

// Runs every planned run; the outcomes are in plan order. An error only when the
// pipeline itself cannot go on (a status call that fails for another reason than the run).
Result<std::vector<RunOutcome>> FanOut(const std::vector<PlannedRun>& runs, const FanOutOptions& options,
                                       StepRunner& runner, PipelineObserver& observer);

// Every run that is not ok as one error: the first failure's evidence, the others named.
Status FanOutFailure(const std::vector<PlannedRun>& runs, const std::vector<RunOutcome>& outcomes);

}  // namespace parity::workflow
