// `parity hunt`: PrecisionComparer's loop (its config.json as-is) over parity's tools, each
// step one tool call through a StepRunner, so the pipeline and an assistant driving the
// tools leave the same report directory:
//   1. worktrees of both sides (audit_workspace; the user's trees are never touched), both
//      runs (run_training with the side's run_script), loss/grad norm compared
//      (compare_logs: bitwise when the tolerance is 0). PASS -> "no divergence".
//   2. msprobe_first_diff on the two dump folders: the first divergent API, its user frame
//      (file:line) and the git hunk (hunt/hunt.json).
//   3. inject_prints at that line in both worktrees, short reruns, compare_logs' probes:
//      inputs equal and output differs -> "inputs equal, output differs" at that line.
//   4. inputs differ -> every user function on the stack instrumented, rerun, the first
//      divergent probe reported (PrecisionComparer's second phase).
//   Where the divergent line is in no changed hunk and msprobe shows the op's tensor
//   inputs equal and a non-tensor argument differing (or the probes before the statement
//   show only a non-tensor value differing), the verdict is "argument differs", with the
//   hunk that sets the value (msprobe_first_diff's value trace) when one was found.
//   Every sentence is built from what the runs showed (hunt.json carries the evidence).
//   5. every instrumented run must reproduce its uninstrumented run's loss and grad norm
//      (else the probes perturbed the numerics: "inconclusive").
// Probes are reverted byte for byte after every rerun and on every error path (checked with
// inject_prints status). Nothing is ever edited to fix anything.
//
// A side may run over SSH (config mode "remote"), and the two code_paths may be different
// repositories: then both commits are copied into a local shadow repository (hunt_shadow.h)
// whose worktrees are analysed and injected, while a remote side runs in a worktree on its
// host (hunt_remote.h): its dumps, log and events are fetched, its probes uploaded and their
// revert checked there by SHA-256. The result extends
// hunt/hunt.json with a "hunt" object (docs/CONTRACTS.md §4) and render_report shows it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/comparer_config.h"
#include "domain/workflow/pipeline.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

inline constexpr const char* kHuntNoDivergence = "no divergence";
inline constexpr const char* kHuntOperator = "inputs equal, output differs";
inline constexpr const char* kHuntProbe = "first divergent probe";
inline constexpr const char* kHuntArgument = "argument differs";
inline constexpr const char* kHuntInconclusive = "inconclusive";

struct HuntOptions {
  std::filesystem::path report_dir;  // required
  bool assume_yes = false;           // --yes: the proposed class of every uncommitted file
  // The hunt MCP tool: its steps' tools ask the user themselves (audit_workspace confirms the
  // classes and the removal of an earlier run's worktrees with the user when the caller is
  // not the user), so the workflow leaves those questions to them instead of refusing.
  bool steps_ask_user = false;
  bool keep_worktrees = false;       // leave the (reverted) worktrees for inspection
  std::string language = "zh";       // of the rendered report
  CancellationToken cancel;          // checked between steps
};

struct HuntOutcome {
  std::string verdict;  // one of the kHunt* names
  std::string explanation;
  nlohmann::json located;  // {file, line, function, api, code, site, when, hunk} or null
  nlohmann::json hunt;     // the "hunt" object written into hunt/hunt.json
  nlohmann::json report;   // render_report's structured result
  std::string baseline_commit, candidate_commit;
  std::vector<std::string> warnings;
};

Result<HuntOutcome> RunHunt(const ComparerConfig& config, const HuntOptions& options, StepRunner& runner,
                            PipelineObserver& observer);

// 0 no divergence, 1 divergence located, 2 inconclusive or error.
int HuntExitCode(const Result<HuntOutcome>& outcome);

// The outcome as `parity hunt` prints it and the hunt tool returns it.
nlohmann::json HuntOutcomeJson(const HuntOutcome& outcome);

}  // namespace parity::workflow
