// The probe lines of two runs side by side (inject_prints' evidence for the hunt). Probes
// pair up on (id, when, name, call, rank), the n-th occurrence of a key with the n-th, and
// are walked in the baseline log's order, which is execution order. A pair diverges when
// the hash differs (the raw bytes of a tensor, the repr of anything else) or, for records
// without a hash (containers, probes that failed), when type, length, value or error
// differ: equality is bitwise, as the hunt needs. A tolerance adds the statistics'
// differences to the report and names the first pair that differs beyond it (only a hash
// differing with every statistic within counts as within; a differing value, type, dtype,
// shape, length or error never does). Unpaired probes are listed, not counted as divergence.
// The JSON is compare_logs' "probes" object, docs/CONTRACTS.md §3.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/logs/compare.h"
#include "domain/logs/probe_line.h"

namespace parity::logs {

struct ProbeStatDiff {
  std::string stat;  // sum, mean, min, max, norm
  nlohmann::json baseline, candidate;
  std::optional<double> abs, rel;  // nullopt when either side is not a finite number
  bool within = false;
};

struct ProbeDivergence {
  ProbeRecord baseline, candidate;
  std::vector<std::string> fields;  // every field whose printed value differs
  std::vector<ProbeStatDiff> stats; // only with a tolerance
  std::optional<bool> stats_within_tolerance;
  bool within_tolerance = false;    // with a tolerance: the pair differs only within it
  std::string note;                 // empty, or why this divergence may not be the cause
};

struct ProbeComparison {
  int64_t baseline_count = 0, candidate_count = 0, matched = 0, divergent_count = 0;
  std::vector<ProbeDivergence> divergent;  // the first kMaxDivergent, in baseline order
  // With a tolerance: how many divergent pairs differ beyond it, and the first of them
  // (wherever it lies in `divergent`, or after it).
  std::optional<Tolerance> tolerance;
  int64_t beyond_tolerance_count = 0;
  std::optional<ProbeDivergence> first_beyond_tolerance;
  std::vector<std::string> unmatched_baseline, unmatched_candidate;  // the first kMaxUnmatched keys
  int64_t unmatched_baseline_count = 0, unmatched_candidate_count = 0;
  std::vector<MalformedProbe> malformed_baseline, malformed_candidate;
  int64_t malformed_count = 0;
  std::vector<std::string> notes;

  static constexpr size_t kMaxDivergent = 6;
  static constexpr size_t kMaxUnmatched = 20;
  static constexpr size_t kMaxMalformed = 20;  // per side

  // "3 of 40 matched probes differ; first: <key> at file:line (hash, sum)" and the like.
  std::string Summary() const;
};

ProbeComparison CompareProbes(const ProbeLog& baseline, const ProbeLog& candidate,
                              const std::optional<Tolerance>& tolerance);

nlohmann::json ProbeComparisonJson(const ProbeComparison& comparison);

}  // namespace parity::logs
