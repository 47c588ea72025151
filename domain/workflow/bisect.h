// `parity bisect`: the first commit between a good and a bad one whose numbers differ from
// the good one's, then its line (the hunt). Driven through a StepRunner like the premerge,
// from the same premerge.json: its repository, model, case, steps, dataset, launcher, env,
// the comparison rule (preset, bitwise, tolerance_abs) and the answers in `confirm`.
//
//   1. the first-parent history good..bad (bisect_git.h); the uncommitted files' classes
//      (confirm.classes or --yes, as the premerge asks): class B is copied into every
//      probe, class C (candidate-only uncommitted code) belongs to no commit and is left out;
//      probe_env's anomalies need confirm.environment_anomalies (or --yes)
//   2. the good commit once, in <report_dir>/good/: the initial checkpoint (gen_ckpt) and
//      its training; every probe loads that checkpoint and is compared with that run
//   3. the search (bisect_search.h): each probe in <report_dir>/probes/<NN>-<commit>/, its
//      own report directory (worktrees by audit_workspace, run_training, parse_log,
//      compare_logs, render_report's reproduce.json), so `parity reproduce` replays it; a
//      commit whose training fails (or whose comparison is INCONCLUSIVE) is skipped with
//      that evidence; k probes run at once with `parallel` > 1
//   4. with `into_merges`, a culprit merge commit is searched again along its merged
//      branch (its fork point probed when it is not already known to match)
//   5. the hunt (hunt.h) on the culprit against its first parent, from the user's
//      PrecisionComparer config with the two refs replaced, in <report_dir>/hunt/
//   6. <report_dir>/bisect.json and bisect.md: every commit tried with its verdict, the
//      answer, the culprit's diff and the hunt's answer; one ledger entry for the bisect.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/workflow/bisect_search.h"
#include "domain/workflow/comparer_config.h"
#include "domain/workflow/hunt.h"
#include "domain/workflow/pipeline.h"
#include "domain/workflow/premerge_config.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

struct BisectOptions {
  std::optional<std::string> good, bad;  // default: the config's baseline and candidate
  std::optional<std::string> case_name;  // the config probed; default the first of `configs`
  bool into_merges = false;
  size_t parallel = 1;                   // concurrent probe trainings (--jobs)
  bool assume_yes = false;               // --yes: the proposed class of every uncommitted file
  bool keep_worktrees = false;
  std::optional<ComparerConfig> hunt;    // the hunt's config; its sides' refs are replaced
  CancellationToken cancel;
};

struct BisectProbe {
  size_t index = 0;        // position in its history (1-based; 0 = the good commit)
  std::string history;     // "first-parent" or "merge <commit>" (inside a merged branch)
  std::string commit, subject;
  std::string verdict;     // same | differs | skip
  std::string reason;      // compare_logs' verdict reason, or why it was skipped
  nlohmann::json evidence; // a skipped probe's error (kind, message, evidence)
  std::string report_dir;  // its own report directory
  size_t round = 0;        // probes of one round ran concurrently
  std::string scheduler_job;  // executor slurm: the training's job id
};

struct BisectOutcome {
  std::string answer;  // found | skipped_range | no_change | unknown (BisectAnswerName)
  std::string explanation;
  std::string good_commit, bad_commit, case_name;
  nlohmann::json commits = nlohmann::json::array();  // the first-parent range, oldest first
  std::vector<BisectProbe> probes;
  nlohmann::json culprit;   // {commit, subject, parent, merge, diff} or null
  nlohmann::json suspects = nlohmann::json::array();  // skipped_range / unknown: the commits it may be
  std::optional<HuntOutcome> hunt;
  std::string hunt_skipped;  // why the hunt did not run, when it did not
  size_t trainings = 0;      // every training run, the good side's two included
  std::vector<std::string> jobs;  // executor slurm: every training's job id, in start order
  size_t probe_bound = 0;    // ceil(log2(n)) + skipped probes of the first-parent search
  std::vector<std::string> warnings;
  std::string report_json, report_md;
};

Result<BisectOutcome> RunBisect(const PremergeConfig& config, const BisectOptions& options, StepRunner& runner,
                                PipelineObserver& observer);

// 0 no change in the range, 1 a culprit (or a skipped range) named, 2 unknown or error.
int BisectExitCode(const Result<BisectOutcome>& outcome);

// bisect.json's object and bisect.md's text (bisect_report.cpp).
nlohmann::json BisectJson(const BisectOutcome& outcome);
std::string BisectMarkdown(const BisectOutcome& outcome);

}  // namespace parity::workflow
