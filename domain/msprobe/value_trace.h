// From a differing value to the hunk that set it. When the first divergent line is in no
// changed hunk, the value that differs there (a non-tensor argument, or an operand) was set
// elsewhere: follow the names on the line back through the candidate's code (`self.eps` ->
// `self.eps = eps` in `__init__` -> the constructor call `RMSNorm(cfg.dim, cfg.norm_eps)` ->
// the field `norm_eps: float = 1e-6`), and search the commit range's changed hunks for the
// differing values (the candidate's on added lines, the baseline's on removed lines) and for
// the names followed. The hunks found are named with the chain and the matches that led to
// them; when none is found, every changed hunk is listed, the closest to the line first.
// Python source only, read as text line by line (no parser): a chain is followed where each
// step is one line (an assignment, a dataclass field, a register_buffer call, a one-line
// constructor call); what it could not follow is said in `notes`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/source_locator.h"
#include "support/status.h"

namespace parity::msprobe {

struct ValueTraceRequest {
  std::filesystem::path repo;      // the git repository (or a linked worktree of it)
  std::filesystem::path worktree;  // the candidate's code, where names are looked up
  std::string baseline_ref, candidate_ref;
  std::filesystem::path file;      // the divergent line's local file (inside worktree)
  int line = 0;
  // The values that differ there: {candidate, baseline} texts as msprobe recorded them
  // ("1e-06", "tanh", "torch.float16").
  std::vector<std::pair<std::string, std::string>> values;
};

struct TraceStep {
  std::string file;  // relative to the worktree
  int line = 0;
  std::string code;  // the line, trimmed
  std::string why;   // "assigns self.eps", "field norm_eps", "calls RMSNorm with eps = cfg.norm_eps"
};

struct TracedHunk {
  Hunk hunk;
  std::vector<std::string> reasons;  // "adds 1e-6 (the candidate's 1e-06)", "assigns norm_eps (chain step 4)"
};

struct ValueTrace {
  std::vector<TraceStep> chain;       // the steps that reached a changed hunk (or every step followed)
  std::vector<TracedHunk> hunks;      // the hunks that set the value, strongest first
  std::vector<Hunk> all_hunks;        // every changed hunk, closest to the line first (when hunks is empty)
  std::vector<std::string> notes;
  std::string sentence;               // what was found, in one sentence
};

// Errors: only a repository or refs that cannot be read.
Result<ValueTrace> TraceValue(const ValueTraceRequest& request);

// Every changed hunk between two commits (all files, context 0).
Result<std::vector<Hunk>> AllDiffHunks(const std::filesystem::path& repo, const std::string& old_ref,
                                       const std::string& new_ref);

nlohmann::json ToJson(const ValueTrace& trace);

}  // namespace parity::msprobe
