// msprobe_first_diff on a whole dump tree: every (step, rank) pair present on both sides
// (step*/rank*/, or rank*/ of one step folder) compared on a bounded pool of threads, the
// dumps in flight bounded by a memory budget (not by the number of ranks). Each pair gets
// its first divergent API (no source lookup); the answer is then the full analysis
// (analyze.h) of the pair that diverges first: the earliest step with a divergence, and in
// it the rank whose first divergent API comes first in execution order, counted in the
// baseline's calls (the same program on every rank: an API the candidate inserts sits just
// before the baseline call it precedes). Ranks that tie are named in the answer, and why
// the lowest is chosen. The answer also holds a summary per (step, rank) and the step x
// layer heatmap's data (module_heat.h). A rank present on one side only is an error naming
// it; a step present on one side only is listed and not compared.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/msprobe/analyze.h"
#include "support/status.h"

namespace parity::msprobe {

struct ScanOptions {
  size_t threads = 0;          // pairs compared at once; 0: half the hardware threads (each pair
                               // reads its two dumps on two), at least 1
  uint64_t memory_budget = 0;  // bytes of dump.json in flight (rows take about 0.8x the file); 0: a
                               // quarter of physical memory. A pair larger than the budget runs alone.
  // Called after each pair, one call at a time: pairs done, pairs in all, "step0/rank3".
  std::function<void(size_t done, size_t total, const std::string& pair)> progress;
};

// Whether the two dump paths hold more than one (step, rank) pair: a tree to scan.
bool IsDumpTree(const std::filesystem::path& baseline, const std::filesystem::path& candidate);

// options.baseline_dump / candidate_dump: dump roots or step folders; options.step and
// options.rank must be unset. The hunt.json object, with "scan".
Result<nlohmann::json> AnalyzeDumpTree(const AnalyzeOptions& options, const ScanOptions& scan);

}  // namespace parity::msprobe
