// The comparison core: two keyed series of one metric (log steps, TensorBoard steps, or
// probe occurrences from inject_prints) against criteria, with the printed precision taken
// into account. Every check has three outcomes: certainly within, certainly beyond, or
// undecidable because the values were printed too coarsely (half a unit in the last printed
// place on each side can hide or create the difference); the last makes the verdict
// INCONCLUSIVE instead of a false PASS.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/logs/series.h"
#include "support/status.h"

namespace parity::logs {

enum class Verdict { kPass, kFail, kInconclusive };
const char* VerdictName(Verdict v);

// A step is within tolerance when its absolute difference is <= abs, or its relative
// difference (|c - b| / |b|) is <= rel; either bound may be absent, not both.
struct Tolerance {
  std::optional<double> abs, rel;
  std::string ToString() const;
};

enum class AggregateKind { kFirstAbs, kFirstRel, kMeanAbs, kMeanRel };
struct Aggregate {
  AggregateKind kind;
  double threshold = 0;
  bool strict = true;  // value < threshold (else <=)
  std::string Name() const;  // "first_abs < 0.005"
};

struct MetricCriteria {
  std::string metric;
  std::optional<Tolerance> per_step;  // checked at every step
  bool bitwise = false;               // every step identical (overrides per_step)
  std::vector<Aggregate> aggregates;  // checked on the whole series
  bool nan_inf_must_match = true;
};

struct CheckResult {
  std::string name;        // "per_step abs<=1e-05", "mean_rel <= 0.1", "nan_inf_equal"
  Verdict outcome = Verdict::kPass;
  std::optional<double> value;
  std::optional<double> uncertainty;
  std::optional<double> threshold;
  std::string message;
};

struct Offending {
  int64_t step = 0;
  double baseline = 0, candidate = 0, abs = 0, rel = 0;
  bool certain = true;  // false: undecidable at the printed precision
};

// One rank's comparison of a metric, in brief (MetricComparison::per_rank).
struct RankSummary {
  int rank = -1;  // -1: unprefixed lines
  Verdict verdict = Verdict::kPass;
  bool placeholder = false;  // a placeholder on both sides: not compared, no verdict of its own
  int64_t steps_compared = 0, equal_steps = 0, exceeding_count = 0, uncertain_count = 0;
  std::optional<int64_t> first_differing_step, first_exceeding_step, max_abs_step;
  double max_abs = 0;
};

struct MetricComparison {
  std::string metric;
  MetricCriteria criteria;
  int64_t steps_compared = 0;
  int64_t steps_dropped = 0;  // steps only one side has (common-steps mode)
  double max_abs = 0, mean_abs = 0, max_rel = 0, mean_rel = 0;
  std::optional<int64_t> max_abs_step, max_rel_step;
  std::optional<int64_t> first_exceeding_step;
  int64_t exceeding_count = 0;   // certainly beyond the per-step tolerance
  int64_t uncertain_count = 0;   // undecidable at the printed precision
  std::optional<int64_t> first_uncertain_step;
  bool identical = true;         // every compared value identical as printed/stored
  int64_t equal_steps = 0;       // steps whose two values are identical as printed/stored
  int64_t bitwise_equal_steps = 0;  // ... and stored in full on both sides
  std::optional<int64_t> first_differing_step;  // the first step whose values are not identical
  std::optional<int> rank;       // the rank these series are of (interleaved per-rank logs)
  bool full_precision = true;    // both sides stored in full: identical means bitwise equal
  double worst_uncertainty = 0;  // the largest |true diff - printed diff| bound of a step
  PrecisionSummary baseline_precision, candidate_precision;
  NonFinite baseline_non_finite, candidate_non_finite;
  std::vector<Offending> offending;  // the first 20 steps certainly beyond, else the first 20 undecidable
  std::vector<CheckResult> checks;
  // With several ranks compared: each one's outcome (this comparison is the worst one's).
  std::vector<RankSummary> per_rank;
  Verdict verdict = Verdict::kPass;
  std::string reason;
  // The aligned series, for diff_summary.csv.
  std::vector<int64_t> keys;
  std::vector<double> baseline_values, candidate_values;
  // The per-step noise envelope it was judged against (domain/logs/noise.h); empty when
  // judged against a fixed tolerance. Written as <metric>_noise_envelope in the CSV.
  std::vector<double> envelope;
};

// Compares two series of one metric. Error when their keys differ and !common_keys_only
// (the message gives both ranges and the first key only one side has), or when nothing is
// left to compare.
Result<MetricComparison> CompareSeries(const std::string& metric, const KeyedSeries& baseline,
                                       const KeyedSeries& candidate, const MetricCriteria& criteria,
                                       bool common_keys_only);

// The worst of several verdicts (FAIL > INCONCLUSIVE > PASS).
Verdict Worst(Verdict a, Verdict b);

// Shortest text that reads back to the same double ("nan", "inf", "-inf" for non-finite).
std::string FormatNumber(double v);

}  // namespace parity::logs
