// Calibrated tolerance: the baseline's own run-to-run noise, measured from K >= 2 runs of
// the same baseline (same commit, checkpoint, argv, environment), becomes a per-metric,
// per-step envelope that the candidate is judged against instead of a fixed tolerance.
//
// The statistic, per metric m and step s (K runs b_1..b_K, b_1 the reference):
//   range_m(s)    = max_{i<j} |b_i(s) - b_j(s)|               (= max_i b_i(s) - min_i b_i(s))
//   rel_m         = max_t range_m(t) / |b_1(t)|               (the largest relative spread, any step)
//   envelope_m(s) = F * max( max_{t<=s} range_m(t), rel_m * |b_1(s)|, unit_m(s) )
//                   when the K runs differ anywhere; 0 at every step when they never do,
// where unit_m(s) is one unit of the value's own resolution (1 ulp of its float32 value
// when it is one, of its double otherwise; the printed unit for printed values) and F the
// safety factor (default 5). The candidate passes step s when |c(s) - b_1(s)| <= envelope_m(s).
// Why: a few runs estimate the spread of one step poorly (the range of 3 normal samples is
// below 0.3 sigma one time in ten), so the spread is pooled: carried forward (runs that have
// parted do not become equal again) and, relative to the value (rounding noise scales with
// it), taken at its largest over all steps; rounding noise is discrete (whole ulps or
// nothing), so no envelope is narrower than the value's unit once the runs are known to
// differ; and F widens what K runs saw to what a new run may do. Measured on the toy trainer
// with run-to-run noise (docs/workflows.md; 36 real runs of 6 steps, 40000 draws of K
// baseline runs and one no-op candidate among them): with K=3 a no-op candidate passes in
// 98.1% of draws at F=3, 99.8% at F=5; with K=5 in 99.8% at F=3, 99.95% at F=4.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "support/status.h"

namespace parity::logs {

inline constexpr double kDefaultSafetyFactor = 5.0;

struct MetricEnvelope {
  std::string metric;
  std::vector<int64_t> keys;       // the reference run's steps
  std::vector<double> range;       // max pairwise |difference| of the K runs at the step
  std::vector<double> envelope;    // the tolerance at the step (see above)
  double max_range = 0;
  std::optional<int64_t> max_range_step;
  double max_relative_range = 0;   // rel_m above
};

struct NoiseEnvelopes {
  int runs = 0;                    // K
  double safety_factor = kDefaultSafetyFactor;
  std::vector<std::string> paths;  // the K runs, the reference first
  std::optional<int64_t> first_divergent_step;  // first step where any metric's runs differ
  std::string first_divergent_metric;
  std::vector<MetricEnvelope> metrics;
  const MetricEnvelope* Find(const std::string& metric) const;
};

// The envelopes of `metrics` from K >= 2 parsed runs (runs[0] is the reference). Every run
// must hold every metric at every step of the reference (the error names the run and step).
Result<NoiseEnvelopes> ComputeNoiseEnvelopes(const std::vector<const ParseResult*>& runs,
                                             const std::vector<std::string>& metrics, double safety_factor);

// Judges each compared metric against its envelope instead of its per-step tolerance (the
// NaN/Inf and aggregate checks stay), and sets the comparison's verdict and reason anew.
// `baseline` / `candidate` are the parsed runs the comparison was made from (for the printed
// precision of each step). The comparison's baseline must be the envelopes' reference run.
Status ApplyNoiseEnvelopes(RunComparison& comparison, const NoiseEnvelopes& envelopes, const ParseResult& baseline,
                           const ParseResult& candidate);

// report.json's "noise" section: statistic, K, F, the runs, and per metric the envelope.
nlohmann::json NoiseJson(const NoiseEnvelopes& envelopes);

// One sentence for the statistic, as written into report.json and the report.
std::string NoiseStatistic(double safety_factor);

}  // namespace parity::logs
