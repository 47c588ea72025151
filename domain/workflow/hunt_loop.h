// The Hunt class behind RunHunt (hunt.h), shared by its three files: hunt.cpp (the
// steps in order, the outcome and the report), hunt_sides.cpp (where each side's code comes
// from, its worktrees and runs, and what is fetched back from a remote side) and
// hunt_probes.cpp (the first divergent operator, the probes, their reruns and revert).
// Internal to parity_workflow.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "domain/workflow/hunt.h"
#include "domain/workflow/hunt_repo.h"
#include "domain/workflow/hunt_script.h"

namespace parity::workflow::hunt_internal {

namespace fs = std::filesystem;
using nlohmann::json;

// The case of the uninstrumented runs (logs, report.json).
inline constexpr const char* kCase = "hunt_logs";

struct RunFiles {
  std::string log;     // the run's output (probe lines), or the config's log_path
  std::string events;  // its TensorBoard event file (full-precision metrics), when asked for
  std::string metrics_file;  // a copy of the JSON lines the trainer wrote (the side's metrics_file)
  const std::string& metrics() const { return !metrics_file.empty() ? metrics_file : events.empty() ? log : events; }
};

struct Side {
  std::string name;  // baseline | candidate (parity's names; PrecisionComparer says "test")
  const ComparerSide* config = nullptr;
  std::string key;  // baseline | test (the config's key)
  fs::path worktree;  // local; a remote side's is its analysis copy (a shadow worktree)
  std::vector<std::string> argv;  // run_script, mapped into the folder it runs in
  std::map<std::string, std::string> env;  // its leading NAME=value words, mapped the same way
  fs::path dump_dir;  // what msprobe_first_diff reads (a remote side's: the fetched copy)
  std::optional<fs::path> log_path;  // the config's log_path, mapped; empty: run_training's log
  std::optional<fs::path> metrics_file;  // the config's metrics_file, mapped: the values compared
  RunFiles run0;                    // the uninstrumented run's
  SideSource source;                // its repository and commit, on its host
  // A remote side (mode "remote"): the connection, and the worktree it runs in there.
  std::optional<run::SshTarget> ssh;
  std::unique_ptr<run::Host> host;
  std::string remote_worktree, remote_dump_dir;
  bool remote_created = false;
  std::vector<std::string> remote_probed;  // files uploaded with probes (RevertAll restores them)
  std::string helper;

  bool remote() const { return host != nullptr; }
  std::string run_dir() const { return remote() ? remote_worktree : worktree.string(); }
  std::string Where() const { return remote() ? remote_worktree + " on " + host->Describe() : worktree.string(); }
};

// `file` relative to `root`, with forward slashes.
std::string Rel(const fs::path& file, const fs::path& root);

// The sentences of the hunt's conclusions (hunt_words.cpp), each from compare_logs' and
// msprobe_first_diff's evidence only.
// compare_logs PASS: per metric, bitwise equal, identical as printed (and what the printed
// digits cannot show), or "differs by X at step N, within the tolerance T".
std::string LogsWithinTolerance(const json& compared);
// Per metric, the figures those sentences use (hunt.json's compare.metrics; the report
// says them in its own language).
json MetricFigures(const json& compared);
// An instrumented run equal to its uninstrumented run only as printed: what the printed
// digits of that log format cannot show, in the trainer's own terms (said once per hunt).
std::string PrintedDigitsWarning(const json& check);
// A probe record's value for a sentence: a non-tensor's repr, a tensor's dtype/shape/hash.
std::string ProbeValue(const json& record);

class Hunt {
 public:
  Hunt(const ComparerConfig& c, const HuntOptions& o, StepRunner& r, PipelineObserver& obs)
      : c_(c), o_(o), run_(r), obs_(obs) {
    base_.name = base_.key = "baseline";
    base_.config = &c_.baseline;
    cand_.name = "candidate";  // parity's name; PrecisionComparer's key is "test"
    cand_.key = "test";
    cand_.config = &c_.test;
  }
  Result<HuntOutcome> Run();

 private:
  Result<json> Call(const std::string& tool, json args);
  Result<HuntOutcome> Body();
  Status CheckConfig();
  // Each side's model, config and job file are registered in the commit it runs (checked
  // through git before any worktree exists; no registry found: only with --yes).
  Status CheckNamesRegistered();
  // Each side's repository and commit on its host. Both local in one repository: worktrees
  // of it directly. A remote side or two repositories: both trees in a local shadow
  // repository (hunt_shadow.h), whose worktrees are analysed (and run, for a local side).
  Status ResolveSources();
  run::Host& HostOf(Side& s) { return s.remote() ? *s.host : *local_; }
  void Warn(const std::string& line);
  // The worktrees, from the two commits; the test tree's uncommitted files by their class.
  Status Worktrees();
  // The side's command, dump folder and log in its worktree.
  Status PrepareSide(Side& s);
  static std::optional<StepsFlag> StepsFlagOf(const Side& s) { return FindStepsFlag(s.argv); }
  // One run of a side: its log (the config's log_path when it names one) and, for a
  // torchtitan-style command, its TensorBoard events in the report directory.
  Result<RunFiles> RunSide(Side& s, const std::string& label, std::vector<std::string> argv, std::optional<int> steps);
  // A remote run's rank-0 msprobe files, fetched (streamed) into the report directory; only
  // what this run dumped (file times on the host's clock), as CheckFreshDump does locally.
  Status FetchDumps(Side& s, double since);
  // The newest TensorBoard event file a remote run wrote, into the same place under tb_dir.
  Status FetchEvents(Side& s, const std::string& remote_dir, double since, const fs::path& tb_dir);
  // A file the run_script writes (the config's `key`: log_path or metrics_file), copied to
  // `copy`: the newest file at `path` (a file or a folder) written since the run began, on
  // the side's host (file times on its clock) or here.
  Result<std::string> TakeWritten(Side& s, const fs::path& path, const std::string& key, const fs::path& copy,
                                  fs::file_time_type started, double remote_started);
  // msprobe_first_diff must read what this run dumped, not a dump left by an earlier one.
  Status CheckFreshDump(const Side& s, fs::file_time_type since);
  // The file (or the newest file of a folder) at `path` written since `since`; NotFound else.
  static Result<fs::path> WrittenSince(const fs::path& path, fs::file_time_type since, const std::string& where,
                                       const std::string& hint);
  Result<json> CompareLogs(const std::string& baseline, const std::string& candidate, const std::string& label,
                           bool common_steps);
  Status FirstDiff(const std::string& log_verdict);
  // msprobe.compare_output_dir: the table where PrecisionComparer's users look for it, under
  // msprobe's own name for a rank's result; never over an existing file.
  Status CopyCompareTable();
  // The reruns dump again into the same folders (it is the same run_script), so the JSON
  // files msprobe_first_diff read are kept in the report directory as the evidence.
  Status KeepDumps();
  // Iteration 1: the statement; iteration 2: every user function on the stack.
  Status Iterate();
  // A stack frame's file as recorded where the candidate ran, in its local worktree.
  fs::path LocalFrameFile(const std::string& recorded) const;
  // Adds a candidate target and its baseline counterpart (the same line before the change).
  Status AddTarget(const std::string& file, int line, bool enclosing, json& targets_b, json& targets_c, json& notes);
  // Injects, reruns both sides, reverts, checks the runs against the uninstrumented ones
  // and reads the first divergent probe. Returns true when the hunt has its answer.
  Result<bool> Instrumented(int it, const json& targets_b, const json& targets_c, json notes);
  // The conclusion of iteration 1 when the first divergent probe is the statement's output
  // (or a non-tensor value before it); msprobe's cause and value trace complete it.
  void ConcludeAtStatement(const json& first, bool output, bool within_before);
  // The conclusion of the stack iteration, from where the first divergent probe is.
  void ConcludeInStack(const json& first, const std::string& site, const std::string& when);
  // msprobe's words about the value that differs and the hunk that sets it ("" when none).
  std::string MsprobeCauseWords() const;
  // The probe that decides: the first beyond debug.trace_threshold (bitwise differences
  // within it are reported, not followed); when every difference is within, the first
  // bitwise one, with a warning.
  json CountedDivergence(const json& probes, const std::string& label);
  Status RevertAll();
  // The local worktree's restored bytes uploaded and checked on the host; after a failure
  // (a lost connection, most likely), once more on a new connection.
  Result<json> RestoreRemoteSide(Side& s);
  static std::string RemoteProbedList(const Side& s);
  void Conclude(const std::string& verdict, const std::string& explanation);
  Result<HuntOutcome> Finish();
  void RecordInLedger(const fs::path& hunt_path);
  // Removes this hunt's worktrees (local and remote) unless --keep-worktrees; one sentence
  // per place saying what was removed, or what is kept and the command that removes it.
  std::vector<std::string> Cleanup();

  ComparerConfig c_;
  const HuntOptions& o_;
  StepRunner& run_;
  PipelineObserver& obs_;
  HuntOutcome out_;
  HuntRepo repo_;
  Side base_, cand_;
  bool wt_created_ = false;
  bool shadow_ = false;  // the trees come from the shadow repository (a remote side, or two repositories)
  std::unique_ptr<run::Host> local_ = run::MakeLocalHost();
  bool tensorboard_ = false;  // both sides' metrics from TensorBoard events (full precision)
  std::vector<Side*> injected_;
  json hunt_ = json::object(), located_ = json::object(), iterations_ = json::array(), reverted_ = json::array();
  json first_diff_;
  int dump_step_ = 0, dump_rank_ = 0;
  bool digits_warned_ = false;  // PrintedDigitsWarning said once
};

}  // namespace parity::workflow::hunt_internal
