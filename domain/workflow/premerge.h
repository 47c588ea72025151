// `parity premerge`: the nine steps of the premerge-accuracy-check skill without an
// assistant. Each step is a call of the parity tool the skill names, through a StepRunner,
// with the arguments the skill gives it, so the pipeline and an assistant driving the tools
// leave the same report directory (ledger, logs, <case>/report.json, report/).
//
// Consent: the read-only steps run first (audit, diff, environment probe, matrix proposal);
// before anything is created every confirmation the skill asks for must be answered by the
// config's `confirm` section (or `assume_yes`), else the run stops with kFailedPrecondition
// naming the missing answer and what was found. Errors stop the run (错误上报原则) with the
// tool's own evidence; the worktrees are then left for inspection and the error says how
// to remove them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/pipeline.h"
#include "domain/workflow/premerge_config.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct CaseVerdict {
  std::string config;
  std::string verdict;  // PASS | FAIL | INCONCLUSIVE
  std::string reason;
  std::string report_json;  // <report_dir>/<config>/report.json
};

// Gate 1 (the baseline repeats itself) and where the baseline runs came from, per config.
struct DeterminismRecord {
  std::string config;
  std::string gate1;        // PASS (bitwise repeat) | FAIL | INCONCLUSIVE (printed digits)
  std::string reason;
  std::string report_json;  // <report_dir>/<config>.gate1/report.json
  int baseline_runs = 0;    // 2, or K with noise.repeats
  int from_cache = 0;       // how many of them were reused from the baseline cache
  std::string cache_key;    // empty when the cache was not used
  bool calibrated = false;  // the candidate was judged against the K runs' envelope
  nlohmann::json environment = nlohmann::json::object();  // {"fingerprint", "same", "differences"}
};

struct PremergeOutcome {
  std::string verdict;  // overall: FAIL if any case fails, else INCONCLUSIVE if any is, else PASS
  std::vector<CaseVerdict> cases;
  std::vector<DeterminismRecord> determinism;
  nlohmann::json report;  // render_report's structured result
  std::string baseline_commit, candidate_commit;
  std::vector<std::string> warnings;  // anomalies accepted by consent, tool warnings
  std::vector<std::string> jobs;      // the scheduler's job ids of the trainings, in plan order (Slurm)
};

struct PremergeOptions {
  bool assume_yes = false;  // --yes: every confirmation answered with the proposal
  bool no_cache = false;    // --no-cache: train every baseline run, store nothing
  // Ctrl-C, an MCP cancel: the trainings still going are cancelled and the premerge stops
  // (its worktrees removed as after any error).
  CancellationToken cancel;
};

Result<PremergeOutcome> RunPremerge(const PremergeConfig& config, const PremergeOptions& options, StepRunner& runner,
                                    PipelineObserver& observer);

// 0 PASS, 1 FAIL, 2 INCONCLUSIVE or error.
int PremergeExitCode(const Result<PremergeOutcome>& outcome);

// The outcome as `parity premerge` prints it and the premerge tool returns it.
nlohmann::json PremergeOutcomeJson(const PremergeOutcome& outcome);

// The overall verdict of several cases (FAIL > INCONCLUSIVE > PASS); INCONCLUSIVE when none.
std::string CombineVerdicts(const std::vector<CaseVerdict>& cases);

}  // namespace parity::workflow
