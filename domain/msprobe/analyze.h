// msprobe_first_diff end to end: read two dump trees (or an msprobe compare result, or the
// result of running the real msprobe compare on them), compare them as msprobe does, find the
// first divergent API, its stack, the first user frame, the local source line and the git
// hunk; write hunt/hunt.json and, when asked, hunt/compare_table.csv (docs/CONTRACTS.md §4).
// The first answer comes first: the table (the slow part: hundreds of MB on a real dump) is
// written on a thread of its own while the answer is worked out, and on_answer hears the
// answer before the table is finished. Knows nothing of MCP.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/compare.h"
#include "domain/msprobe/first_diff.h"
#include "domain/msprobe/run_compare.h"
#include "domain/msprobe/source_locator.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::msprobe {

struct AnalyzeOptions {
  // Either both dumps (root, step, rank folder or dump.json) ...
  std::optional<std::filesystem::path> baseline_dump, candidate_dump;
  // ... or an msprobe compare result (.csv or .xlsx; target = candidate, golden = baseline).
  std::optional<std::filesystem::path> compare_result;
  // With the two dumps: run the real `msprobe compare` on them (the chosen step and rank's
  // dump.json files) and analyse its result instead of parity's own compare. target,
  // golden and (when empty) output_dir are filled in: <output_dir>/msprobe_compare.
  std::optional<MsprobeRunOptions> msprobe_run;
  std::optional<int> step, rank;
  CompareOptions compare;
  DiffCriteria criteria;
  // Repeats of the baseline (same code, same environment; each a dump root, step/rank folder
  // or dump.json, read at the same step and rank): with them the criterion is kCalibrated,
  // each row judged against its own run-to-run spread (noise_envelope.h). Two dumps only.
  std::vector<std::filesystem::path> noise_dumps;
  double noise_safety_factor = 3;
  LocateOptions locate;
  size_t max_next = 5;
  // Where hunt.json and compare_table.csv go; empty: nothing is written.
  std::filesystem::path output_dir;
  // Write compare_table.csv (msprobe's layout) into output_dir, from parity's own compare of
  // the two dumps. Off by default: the answer does not need it.
  bool write_compare_table = false;
  // Called once with the answer (the hunt.json object) as soon as it is known, before the
  // compare table is finished; the result returned afterwards is the same object.
  std::function<void(const nlohmann::json& answer)> on_answer;
  // Set by the scan of a dump tree (scan.h) that chose this (step, rank) pair: the answer
  // carries it as "scan", and its "explanation" leads the answer's.
  nlohmann::json scan;
  CancellationToken cancel;
};

// The hunt.json object (schema "parity.hunt/1").
Result<nlohmann::json> AnalyzeFirstDiff(const AnalyzeOptions& options);

// Parses Python's repr of a list of str (msprobe's NPU_Stack_Info cell).
std::optional<std::vector<std::string>> ParsePyStrList(std::string_view text);

}  // namespace parity::msprobe
