// reproduce.json: everything a stranger needs to rerun a comparison, generated only from
// what parity actually did (the ledger), never typed by hand. Its shape:
//   {"schema": "parity.reproduce/1", "generated": ISO time,
//    "report_dir": the directory the commands wrote to, as the ledger recorded it,
//    "repo": {"path", "clone_url", "remotes": [{"name","url"}]},
//    "baseline":  {"ref", "commit", "worktree", "on_remotes": [remote names holding it]},
//    "candidate": {...same...},
//    "infra": {"tarball": path relative to report_dir or null, "files": [...]},
//    "environment": {"baseline": {...}, "candidate": {...}}   (probe_env summaries),
//    "warnings": ["the candidate commit ... is on no remote ..."],
//    "steps": [{"id", "tool", "action", "side", "config", "host", "cwd", "env", "argv",
//               "outputs"}]}  in ledger order; in-process tools appear as
//               ["parity", "call", TOOL, ARGUMENTS-JSON, "--report-dir", REPORT_DIR], and
//               what run_training did around its command becomes steps "<id>.clear"
//               (rm -rf of the checkpoint folder) and "<id>.move" (the new initial
//               checkpoint moved into the report directory).
// Validation refuses empty values, placeholders ("<config>", "TODO", "xxx"), commits
// that are not 40 hex digits or not in the repository, and paths that do not exist,
// naming the field (JSON path) that is wrong.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/report/model.h"
#include "support/cancel.h"
#include "support/status.h"
#include "support/subprocess.h"

namespace parity::report {

inline constexpr const char* kReproduceSchema = "parity.reproduce/1";

// Builds reproduce.json from the model's ledger, validated against the real world.
Result<nlohmann::json> BuildReproduce(const ReportModel& model, const std::string& generated_at);

// Shape and values of a reproduce.json (errors name "reproduce.<path>"). With
// `check_world`, repo.path must be a repository holding both commits.
Status ValidateReproduce(const nlohmann::json& reproduce, bool check_world);

struct ReplayOptions {
  std::filesystem::path reproduce_json;
  // Fresh directory for the rerun: worktrees/<side>, numerical_report/. Must not exist
  // or be empty.
  std::filesystem::path work_dir;
  std::string parity_binary;   // what "parity" in a step means; default: this executable
  bool dry_run = false;        // print the plan, run nothing
  CancellationToken cancel;
  // What the user sees: "== step" and "$ command" lines (newline-terminated) and the
  // commands' output as it arrives.
  std::function<void(const std::string& text)> print;
  // Asked before each recorded step runs (not in a dry run), with the step as recorded and
  // the command as it will run: a reproduce.json is a file, not the user's word, so what
  // it asks to run passes the user's policy first (cli/cmd_reproduce.cpp). Unset: refused.
  std::function<Status(const nlohmann::json& step, const ProcessOptions& process)> authorize;
};

// Replays a reproduce.json: clones the repository into work_dir/repo (the user's checkout
// is only read), sets the recorded refs to their commits there, creates detached worktrees
// of both commits under work_dir/worktrees, extracts the infra tarball into both, then runs
// every step with the recorded paths mapped into work_dir. Each step's output is written to
// work_dir/numerical_report/<its recorded outputs.log>, or to replay/<id>.log when it
// recorded none. A `parity call` input that an earlier step wrote under a run-stamped name
// (TensorBoard's events.out.tfevents.<time>.<host>.<pid>) is looked up again in the rerun.
Status Replay(const ReplayOptions& options);

}  // namespace parity::report
