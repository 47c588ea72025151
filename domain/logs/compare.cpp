#include "domain/logs/compare.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "domain/logs/exact_decimal.h"

namespace parity::logs {
namespace {

constexpr size_t kMaxOffending = 20;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string Range(const KeyedSeries& s) {
  if (s.empty()) return "no steps";
  return std::to_string(s.keys.front()) + ".." + std::to_string(s.keys.back()) + " (" +
         std::to_string(s.size()) + " steps)";
}

// Whether two values are the same for comparison: bit-identical numbers, both NaN, or the
// same infinity.
bool Same(double b, double c) {
  if (std::isnan(b) || std::isnan(c)) return std::isnan(b) && std::isnan(c);
  return b == c && std::signbit(b) == std::signbit(c);
}

// Outcome of "value (known to +-u) <= / < threshold".
Verdict Decide(double value, double u, double threshold, bool strict) {
  if (std::isnan(value)) return Verdict::kFail;
  if (strict) {
    if (value + u < threshold) return Verdict::kPass;
    if (value - u >= threshold) return Verdict::kFail;
  } else {
    if (value + u <= threshold) return Verdict::kPass;
    if (value - u > threshold) return Verdict::kFail;
  }
  return Verdict::kInconclusive;
}

std::string DescribeDecimals(const PrecisionSummary& p) {
  if (p.exact) return "full precision";
  if (p.varying) return std::to_string(p.min_decimals) + "-" + std::to_string(p.max_decimals) + " decimals";
  return std::to_string(p.min_decimals) + " decimals";
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kFail: return "FAIL";
    case Verdict::kInconclusive: return "INCONCLUSIVE";
  }
  return "FAIL";
}

Verdict Worst(Verdict a, Verdict b) {
  if (a == Verdict::kFail || b == Verdict::kFail) return Verdict::kFail;
  if (a == Verdict::kInconclusive || b == Verdict::kInconclusive) return Verdict::kInconclusive;
  return Verdict::kPass;
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string Tolerance::ToString() const {
  std::string s;
  if (abs) s += "abs <= " + FormatNumber(*abs);
  if (rel) s += (s.empty() ? "" : " or ") + std::string("rel <= ") + FormatNumber(*rel);
  return s;
}

std::string Aggregate::Name() const {
  const char* what = "";
  switch (kind) {
    case AggregateKind::kFirstAbs: what = "first-step abs diff"; break;
    case AggregateKind::kFirstRel: what = "first-step rel diff"; break;
    case AggregateKind::kMeanAbs: what = "mean abs diff"; break;
    case AggregateKind::kMeanRel: what = "mean rel diff"; break;
  }
  return std::string(what) + (strict ? " < " : " <= ") + FormatNumber(threshold);
}

Result<MetricComparison> CompareSeries(const std::string& metric, const KeyedSeries& baseline,
                                       const KeyedSeries& candidate, const MetricCriteria& criteria,
                                       bool common_keys_only) {
  MetricComparison r;
  r.metric = metric;
  r.criteria = criteria;
  r.baseline_precision = SummarisePrecision(baseline);
  r.candidate_precision = SummarisePrecision(candidate);
  r.baseline_non_finite = CountNonFinite(baseline);
  r.candidate_non_finite = CountNonFinite(candidate);

  if (!common_keys_only && baseline.keys != candidate.keys) {
    // The first step only one side has, to point at the gap.
    size_t i = 0, j = 0;
    std::string where;
    while (i < baseline.size() || j < candidate.size()) {
      if (j >= candidate.size() || (i < baseline.size() && baseline.keys[i] < candidate.keys[j])) {
        where = "step " + std::to_string(baseline.keys[i]) + " is only in the baseline";
        break;
      }
      if (i >= baseline.size() || candidate.keys[j] < baseline.keys[i]) {
        where = "step " + std::to_string(candidate.keys[j]) + " is only in the candidate";
        break;
      }
      ++i;
      ++j;
    }
    return FailedPrecondition("the two runs do not cover the same steps of '" + metric +
                              "': baseline " + Range(baseline) + ", candidate " + Range(candidate) +
                              "; " + where)
        .WithHint("let both runs finish the same number of steps with the same log frequency, "
                  "or pass steps=\"common\" to compare only the steps both logged");
  }

  // Align on common keys (identical key lists in the strict case).
  const size_t n_max = std::min(baseline.size(), candidate.size());
  r.keys.reserve(n_max);
  r.baseline_values.reserve(n_max);
  r.candidate_values.reserve(n_max);
  std::vector<double> uncertainties;
  uncertainties.reserve(n_max);
  std::vector<bool> same_decimals;
  std::vector<Decimals> b_decimals, c_decimals;
  size_t i = 0, j = 0;
  while (i < baseline.size() && j < candidate.size()) {
    if (baseline.keys[i] < candidate.keys[j]) {
      ++i;
    } else if (candidate.keys[j] < baseline.keys[i]) {
      ++j;
    } else {
      r.keys.push_back(baseline.keys[i]);
      r.baseline_values.push_back(baseline.values[i]);
      r.candidate_values.push_back(candidate.values[j]);
      uncertainties.push_back(HalfUnit(baseline.decimals[i]) + HalfUnit(candidate.decimals[j]));
      same_decimals.push_back(baseline.decimals[i] == candidate.decimals[j]);
      b_decimals.push_back(baseline.decimals[i]);
      c_decimals.push_back(candidate.decimals[j]);
      ++i;
      ++j;
    }
  }
  r.steps_compared = static_cast<int64_t>(r.keys.size());
  r.steps_dropped = static_cast<int64_t>(baseline.size() + candidate.size()) - 2 * r.steps_compared;
  if (r.keys.empty()) {
    return FailedPrecondition("no step of '" + metric + "' is in both runs: baseline " + Range(baseline) +
                              ", candidate " + Range(candidate));
  }

  // Per-step differences and the per-step check.
  std::vector<Offending> certain, uncertain;
  const bool check_steps = criteria.bitwise || criteria.per_step.has_value();
  double sum_abs = 0, sum_rel = 0, sum_u = 0, sum_u_rel = 0;
  int64_t finite_steps = 0, rel_steps = 0;
  for (size_t k = 0; k < r.keys.size(); ++k) {
    const double b = r.baseline_values[k], c = r.candidate_values[k], u = uncertainties[k];
    const bool same = Same(b, c);
    if (same) {
      ++r.equal_steps;
      if (u == 0) ++r.bitwise_equal_steps;
    } else {
      r.identical = false;
      if (!r.first_differing_step) r.first_differing_step = r.keys[k];
    }
    if (u > 0) r.full_precision = false;
    r.worst_uncertainty = std::max(r.worst_uncertainty, u);
    double abs = same ? 0.0 : std::fabs(c - b);
    if (std::isnan(abs)) abs = kInf;  // NaN on one side only, or opposite infinities
    const double rel = abs == 0 ? 0.0 : (b == 0 ? kInf : abs / std::fabs(b));
    if (abs > r.max_abs || (!r.max_abs_step && abs > 0)) {
      r.max_abs = abs;
      r.max_abs_step = r.keys[k];
    }
    if (rel > r.max_rel || (!r.max_rel_step && rel > 0)) {
      r.max_rel = rel;
      r.max_rel_step = r.keys[k];
    }
    if (std::isfinite(abs)) {
      sum_abs += abs;
      sum_u += u;
      ++finite_steps;
      if (std::isfinite(rel)) {
        sum_rel += rel;
        sum_u_rel += std::fabs(b) > u ? u / (std::fabs(b) - u) : kInf;
        ++rel_steps;
      }
    }
    if (!check_steps) continue;

    Verdict step = Verdict::kPass;
    if (same && u == 0) {
      step = Verdict::kPass;
    } else if (!std::isfinite(b) || !std::isfinite(c)) {
      step = same ? Verdict::kPass : Verdict::kFail;  // non-finite values are printed exactly
    } else if (criteria.bitwise) {
      // Values printed in one format differ as printed only if they truly differ.
      if (!same) step = (same_decimals[k] || abs > u) ? Verdict::kFail : Verdict::kInconclusive;
      else step = Verdict::kInconclusive;  // equal as printed, not shown equal in full
    } else if (auto exact = DecideStepExactly(b, b_decimals[k], c, c_decimals[k], *criteria.per_step)) {
      step = *exact;  // on the printed digits, exactly
    } else {
      const Tolerance& t = *criteria.per_step;
      // Certainly within: some bound holds even at the worst of the printed uncertainty.
      const bool within_abs = t.abs && abs + u <= *t.abs;
      const bool within_rel = t.rel && std::fabs(b) > u && (abs + u) / (std::fabs(b) - u) <= *t.rel;
      // Certainly beyond: every given bound fails even at the best of it.
      const bool beyond_abs = !t.abs || abs - u > *t.abs;
      const bool beyond_rel = !t.rel || (abs - u) / (std::fabs(b) + u) > *t.rel;
      if (within_abs || within_rel) step = Verdict::kPass;
      else if (beyond_abs && beyond_rel) step = Verdict::kFail;
      else step = Verdict::kInconclusive;
    }
    if (step == Verdict::kFail) {
      if (r.exceeding_count++ == 0) r.first_exceeding_step = r.keys[k];
    } else if (step == Verdict::kInconclusive) {
      if (r.uncertain_count++ == 0) r.first_uncertain_step = r.keys[k];
    }
    // The first certain failures, and the first undecidable steps in case there is none:
    // kept apart, so that undecidable steps met first never crowd out the failures.
    if (step == Verdict::kFail && certain.size() < kMaxOffending) {
      certain.push_back({r.keys[k], b, c, abs, rel, true});
    } else if (step == Verdict::kInconclusive && r.exceeding_count == 0 && uncertain.size() < kMaxOffending) {
      uncertain.push_back({r.keys[k], b, c, abs, rel, false});
    }
  }
  r.offending = r.exceeding_count > 0 ? std::move(certain) : std::move(uncertain);
  r.mean_abs = finite_steps ? sum_abs / finite_steps : 0;
  r.mean_rel = rel_steps ? sum_rel / rel_steps : 0;

  // The checks, each with its own outcome.
  if (check_steps) {
    CheckResult c;
    c.name = criteria.bitwise ? "every step bitwise equal" : "every step " + criteria.per_step->ToString();
    if (criteria.per_step && criteria.per_step->abs) c.threshold = criteria.per_step->abs;
    c.value = r.max_abs;
    c.uncertainty = r.worst_uncertainty;
    if (r.exceeding_count > 0) {
      const Offending& o = r.offending.front();
      c.outcome = Verdict::kFail;
      c.message = std::to_string(r.exceeding_count) + " of " + std::to_string(r.steps_compared) +
                  " steps beyond, first at step " + std::to_string(*r.first_exceeding_step) +
                  " (baseline " + FormatNumber(o.baseline) + ", candidate " + FormatNumber(o.candidate) +
                  ", abs diff " + FormatNumber(o.abs) + ")";
    } else if (r.uncertain_count > 0) {
      c.outcome = Verdict::kInconclusive;
      c.message = std::to_string(r.uncertain_count) + " of " + std::to_string(r.steps_compared) +
                  " steps cannot be decided at the printed precision (each value is known only to " +
                  "+-half a unit in its last printed decimal; together up to " +
                  FormatNumber(r.worst_uncertainty) + "), first at step " +
                  std::to_string(*r.first_uncertain_step);
    } else {
      c.message = "all " + std::to_string(r.steps_compared) + " steps within";
    }
    r.checks.push_back(std::move(c));
  }
  for (const Aggregate& a : criteria.aggregates) {
    CheckResult c;
    c.name = a.Name();
    c.threshold = a.threshold;
    double value = 0, u = 0;
    const double b0 = r.baseline_values.front(), c0 = r.candidate_values.front();
    const double u0 = uncertainties.front();
    switch (a.kind) {
      case AggregateKind::kFirstAbs:
        value = Same(b0, c0) ? 0 : std::fabs(c0 - b0);
        u = u0;
        break;
      case AggregateKind::kFirstRel:
        value = Same(b0, c0) ? 0 : (b0 == 0 ? kInf : std::fabs(c0 - b0) / std::fabs(b0));
        u = std::fabs(b0) > u0 ? u0 / (std::fabs(b0) - u0) : kInf;
        break;
      case AggregateKind::kMeanAbs:
        value = r.mean_abs;
        u = finite_steps ? sum_u / finite_steps : 0;
        break;
      case AggregateKind::kMeanRel:
        value = r.mean_rel;
        u = rel_steps ? sum_u_rel / rel_steps : 0;
        break;
    }
    if (std::isnan(value)) value = kInf;
    c.value = value;
    c.uncertainty = u;
    c.outcome = Decide(value, u, a.threshold, a.strict);
    c.message = FormatNumber(value) + (u > 0 ? " (+-" + FormatNumber(u) + " from the printed precision)" : "");
    r.checks.push_back(std::move(c));
  }
  if (criteria.nan_inf_must_match) {
    CheckResult c;
    c.name = "NaN/Inf counts equal";
    const bool equal = r.baseline_non_finite.nan == r.candidate_non_finite.nan &&
                       r.baseline_non_finite.inf == r.candidate_non_finite.inf;
    c.outcome = equal ? Verdict::kPass : Verdict::kFail;
    c.message = "baseline " + std::to_string(r.baseline_non_finite.nan) + " NaN / " +
                std::to_string(r.baseline_non_finite.inf) + " Inf, candidate " +
                std::to_string(r.candidate_non_finite.nan) + " NaN / " +
                std::to_string(r.candidate_non_finite.inf) + " Inf";
    r.checks.push_back(std::move(c));
  }

  // The metric's verdict and the sentence that explains it.
  for (const auto& c : r.checks) r.verdict = Worst(r.verdict, c.outcome);
  const std::string precision = "baseline " + DescribeDecimals(r.baseline_precision) + ", candidate " +
                                DescribeDecimals(r.candidate_precision);
  if (r.verdict == Verdict::kFail) {
    for (const auto& c : r.checks) {
      if (c.outcome == Verdict::kFail) {
        r.reason = metric + ": " + c.name + " failed: " + c.message;
        break;
      }
    }
  } else if (r.verdict == Verdict::kInconclusive) {
    std::string failing;
    for (const auto& c : r.checks) {
      if (c.outcome == Verdict::kInconclusive) {
        failing = c.name + ": " + c.message;
        break;
      }
    }
    r.reason = metric + " was printed with " + precision + ", too coarse to decide " + failing +
               ". Compare full-precision values instead: TensorBoard event files (torchtitan "
               "--metrics.enable_tensorboard; parse_log/compare_logs read them), or raise the "
               "precision the log prints";
  } else {
    r.reason = metric + ": all " + std::to_string(r.steps_compared) + " steps pass";
    if (r.identical) {
      r.reason += r.full_precision ? " (bitwise equal)" : " (identical as printed, " + precision + ")";
    } else {
      r.reason += " (max abs diff " + FormatNumber(r.max_abs) + " at step " +
                  std::to_string(r.max_abs_step.value_or(0)) + ")";
    }
  }
  return r;
}

}  // namespace parity::logs
