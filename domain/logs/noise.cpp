#include "domain/logs/noise.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "domain/logs/result_json.h"

namespace parity::logs {

namespace {

using json = nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMaxOffending = 20;

bool Same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// One unit of a value's own resolution: the printed unit, or one ulp of the float32 it is
// (TensorBoard scalars, torch .item() of a float32 tensor), or of its double.
double Unit(double v, Decimals decimals) {
  if (decimals != kExact) return 2 * HalfUnit(decimals);
  if (!std::isfinite(v)) return 0;
  const double a = std::fabs(v);
  const float f = static_cast<float>(a);
  if (static_cast<double>(f) == a) return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - a;
  return std::nextafter(a, kInf) - a;
}

// Index of `key` in a finalized (ascending) series, or -1.
ptrdiff_t IndexOf(const KeyedSeries& s, int64_t key) {
  auto it = std::lower_bound(s.keys.begin(), s.keys.end(), key);
  return it != s.keys.end() && *it == key ? it - s.keys.begin() : -1;
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

const MetricEnvelope* NoiseEnvelopes::Find(const std::string& metric) const {
  for (const auto& m : metrics) {
    if (m.metric == metric) return &m;
  }
  return nullptr;
}

std::string NoiseStatistic(double safety_factor) {
  return "envelope(s) = " + FormatNumber(safety_factor) +
         " x max(range carried to s, max relative range x |run 1(s)|, one unit of the value's resolution), where "
         "range(t) is the K baseline runs' max pairwise |difference| at step t, carried as a running maximum, and "
         "the relative range is range(t) / |run 1(t)| at its largest over all steps; 0 at every step (bitwise) when "
         "the K runs never differ. The candidate passes a step when |candidate - baseline run 1| <= envelope.";
}

Result<NoiseEnvelopes> ComputeNoiseEnvelopes(const std::vector<const ParseResult*>& runs,
                                             const std::vector<std::string>& metrics, double safety_factor) {
  if (runs.size() < 2) return InvalidArgument("a noise envelope needs at least 2 baseline runs, got " + std::to_string(runs.size()));
  if (!(safety_factor >= 1) || !std::isfinite(safety_factor)) {
    return InvalidArgument("the noise safety factor must be a finite number >= 1, got " + FormatNumber(safety_factor));
  }
  NoiseEnvelopes out;
  out.runs = static_cast<int>(runs.size());
  out.safety_factor = safety_factor;
  for (const auto* r : runs) out.paths.push_back(r->path);

  // Pass 1: each metric's per-step range, and the first step at which any metric differs.
  std::vector<std::vector<Decimals>> ref_decimals;
  for (const auto& name : metrics) {
    const MetricResult* ref = runs[0]->Find(name);
    if (!ref) return FailedPrecondition("noise: metric '" + name + "' is not in baseline run 1 (" + runs[0]->path + ")");
    MetricEnvelope m;
    m.metric = name;
    m.keys = ref->series.keys;
    m.range.assign(m.keys.size(), 0.0);
    for (size_t k = 0; k < m.keys.size(); ++k) {
      double lo = ref->series.values[k], hi = lo;
      bool differs = false, non_finite = !std::isfinite(lo);
      for (size_t i = 1; i < runs.size(); ++i) {
        const MetricResult* other = runs[i]->Find(name);
        if (!other) {
          return FailedPrecondition("noise: metric '" + name + "' is not in baseline run " + std::to_string(i + 1) +
                                    " (" + runs[i]->path + ")");
        }
        ptrdiff_t at = IndexOf(other->series, m.keys[k]);
        if (at < 0) {
          return FailedPrecondition("noise: baseline run " + std::to_string(i + 1) + " (" + runs[i]->path +
                                    ") has no step " + std::to_string(m.keys[k]) + " of '" + name + "'")
              .WithHint("every baseline repeat must run the same steps with the same log frequency");
        }
        const double v = other->series.values[at];
        if (!Same(v, ref->series.values[k])) differs = true;
        non_finite = non_finite || !std::isfinite(v);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      // A NaN or an infinity in one run but not another is noise no tolerance can express.
      m.range[k] = !differs ? 0.0 : (non_finite ? kInf : hi - lo);
      if (differs && (!out.first_divergent_step || m.keys[k] < *out.first_divergent_step)) {
        out.first_divergent_step = m.keys[k];
        out.first_divergent_metric = name;
      }
      if (m.range[k] > m.max_range) {
        m.max_range = m.range[k];
        m.max_range_step = m.keys[k];
      }
    }
    ref_decimals.push_back(ref->series.decimals);
    out.metrics.push_back(std::move(m));
  }

  // Pass 2: the envelope. Runs that never differ: 0 everywhere (a bitwise verdict).
  for (size_t mi = 0; mi < out.metrics.size(); ++mi) {
    MetricEnvelope& m = out.metrics[mi];
    const MetricResult* ref = runs[0]->Find(m.metric);
    const std::vector<double>& values = ref->series.values;
    m.envelope.assign(m.keys.size(), 0.0);
    if (!out.first_divergent_step) continue;
    for (size_t k = 0; k < m.keys.size(); ++k) {
      if (m.range[k] > 0 && std::isfinite(values[k]) && values[k] != 0) {
        m.max_relative_range = std::max(m.max_relative_range, m.range[k] / std::fabs(values[k]));
      }
    }
    double carried = 0;
    for (size_t k = 0; k < m.keys.size(); ++k) {
      carried = std::max(carried, m.range[k]);
      const double pooled = std::isfinite(values[k]) ? m.max_relative_range * std::fabs(values[k]) : 0.0;
      m.envelope[k] = safety_factor * std::max({carried, pooled, Unit(values[k], ref_decimals[mi][k])});
    }
  }
  return out;
}

Status ApplyNoiseEnvelopes(RunComparison& comparison, const NoiseEnvelopes& envelopes, const ParseResult& baseline,
                           const ParseResult& candidate) {
  comparison.verdict = Verdict::kPass;
  std::vector<std::string> names;
  for (auto& m : comparison.metrics) {
    names.push_back(m.metric);
    const MetricEnvelope* e = envelopes.Find(m.metric);
    if (!e) return FailedPrecondition("noise: no envelope for metric '" + m.metric + "'");
    const MetricResult* b = baseline.Find(m.metric);
    const MetricResult* c = candidate.Find(m.metric);
    if (!b || !c) return FailedPrecondition("noise: metric '" + m.metric + "' is missing from a compared run");
    m.envelope.assign(m.keys.size(), 0.0);
    m.exceeding_count = 0;
    m.uncertain_count = 0;
    m.first_exceeding_step.reset();
    m.first_uncertain_step.reset();
    m.offending.clear();
    for (size_t k = 0; k < m.keys.size(); ++k) {
      auto it = std::lower_bound(e->keys.begin(), e->keys.end(), m.keys[k]);
      if (it == e->keys.end() || *it != m.keys[k]) {
        return FailedPrecondition("noise: step " + std::to_string(m.keys[k]) + " of '" + m.metric +
                                  "' is compared but not in baseline run 1")
            .WithHint("the comparison's baseline must be the first of the noise runs");
      }
      const double env = e->envelope[it - e->keys.begin()];
      m.envelope[k] = env;
      const double bv = m.baseline_values[k], cv = m.candidate_values[k];
      ptrdiff_t bi = IndexOf(b->series, m.keys[k]), ci = IndexOf(c->series, m.keys[k]);
      const double u = (bi >= 0 ? HalfUnit(b->series.decimals[bi]) : 0) + (ci >= 0 ? HalfUnit(c->series.decimals[ci]) : 0);
      Verdict step;
      double abs = Same(bv, cv) ? 0.0 : std::fabs(cv - bv);
      if (std::isnan(abs)) abs = kInf;
      if (Same(bv, cv) && u == 0) step = Verdict::kPass;
      else if (!std::isfinite(bv) || !std::isfinite(cv)) step = Same(bv, cv) ? Verdict::kPass : Verdict::kFail;
      else if (std::isinf(env)) step = Verdict::kInconclusive;  // the baseline runs disagree on NaN/Inf: no bound
      else if (abs + u <= env) step = Verdict::kPass;
      else if (abs - u > env) step = Verdict::kFail;
      else step = Verdict::kInconclusive;
      if (step == Verdict::kFail) {
        if (m.exceeding_count++ == 0) m.first_exceeding_step = m.keys[k];
      } else if (step == Verdict::kInconclusive) {
        if (m.uncertain_count++ == 0) m.first_uncertain_step = m.keys[k];
      }
      if (step != Verdict::kPass && m.offending.size() < kMaxOffending && (step == Verdict::kFail || m.exceeding_count == 0)) {
        const double rel = abs == 0 ? 0.0 : (bv == 0 ? kInf : abs / std::fabs(bv));
        m.offending.push_back({m.keys[k], bv, cv, abs, rel, step == Verdict::kFail});
      }
    }
    if (m.exceeding_count > 0) std::erase_if(m.offending, [](const Offending& o) { return !o.certain; });

    // The per-step check becomes the envelope check; the other checks stay as they were.
    CheckResult check;
    check.name = "every step within the baseline's noise envelope (" + std::to_string(envelopes.runs) + " runs, F=" +
                 FormatNumber(envelopes.safety_factor) + ")";
    check.value = m.max_abs;
    check.uncertainty = m.worst_uncertainty;
    check.threshold = e->envelope.empty() ? 0.0 : *std::max_element(e->envelope.begin(), e->envelope.end());
    if (m.exceeding_count > 0) {
      const Offending& o = m.offending.front();
      const size_t at = std::lower_bound(m.keys.begin(), m.keys.end(), o.step) - m.keys.begin();
      check.outcome = Verdict::kFail;
      check.message = std::to_string(m.exceeding_count) + " of " + std::to_string(m.steps_compared) +
                      " steps beyond the noise, first at step " + std::to_string(o.step) + " (baseline " +
                      FormatNumber(o.baseline) + ", candidate " + FormatNumber(o.candidate) + ", abs diff " +
                      FormatNumber(o.abs) + " > envelope " + FormatNumber(m.envelope[at]) + ")";
    } else if (m.uncertain_count > 0) {
      check.outcome = Verdict::kInconclusive;
      check.message = std::to_string(m.uncertain_count) + " of " + std::to_string(m.steps_compared) +
                      " steps cannot be decided against the envelope at the printed precision, first at step " +
                      std::to_string(*m.first_uncertain_step);
    } else {
      check.outcome = Verdict::kPass;
      check.message = "all " + std::to_string(m.steps_compared) + " steps within (largest envelope " +
                      FormatNumber(check.threshold.value_or(0)) + ", largest difference " + FormatNumber(m.max_abs) + ")";
    }
    std::erase_if(m.checks, [](const CheckResult& c) { return c.name.rfind("every step", 0) == 0; });
    m.checks.insert(m.checks.begin(), check);
    m.criteria.per_step.reset();
    m.criteria.bitwise = false;
    m.verdict = Verdict::kPass;
    for (const auto& c : m.checks) m.verdict = Worst(m.verdict, c.outcome);
    if (m.verdict == Verdict::kPass) {
      m.reason = m.metric + ": " + check.message;
    } else {
      for (const auto& c : m.checks) {
        if (c.outcome == m.verdict) {
          m.reason = m.metric + ": " + c.name + (m.verdict == Verdict::kFail ? " failed: " : ": ") + c.message;
          break;
        }
      }
    }
    comparison.verdict = Worst(comparison.verdict, m.verdict);
  }
  comparison.bitwise = false;
  std::vector<std::string> reasons;
  for (const auto& m : comparison.metrics) {
    if (m.verdict == comparison.verdict) reasons.push_back(m.reason);
  }
  const std::string noise = "judged against the baseline's own noise (" + std::to_string(envelopes.runs) +
                            " baseline runs, safety factor " + FormatNumber(envelopes.safety_factor) + ")";
  comparison.reason = noise + ": " + Join(reasons, "; ");
  comparison.notes.push_back(noise + "; " + NoiseStatistic(envelopes.safety_factor));
  if (!envelopes.first_divergent_step) {
    comparison.notes.push_back("the " + std::to_string(envelopes.runs) +
                               " baseline runs are bitwise identical: every envelope is 0, the verdict is bitwise");
  } else {
    comparison.notes.push_back("the " + std::to_string(envelopes.runs) + " baseline runs first differ at step " +
                               std::to_string(*envelopes.first_divergent_step) + " (" + envelopes.first_divergent_metric + ")");
  }
  return Status::Ok();
}

json NoiseJson(const NoiseEnvelopes& e) {
  json metrics = json::object();
  for (const auto& m : e.metrics) {
    double max_env = m.envelope.empty() ? 0.0 : *std::max_element(m.envelope.begin(), m.envelope.end());
    json steps = json::array();
    for (size_t k = 0; k < m.keys.size(); ++k) {
      steps.push_back({{"step", m.keys[k]}, {"range", ValueToJson(m.range[k])}, {"envelope", ValueToJson(m.envelope[k])}});
    }
    metrics[m.metric] = {{"max_range", ValueToJson(m.max_range)},
                         {"max_relative_range", ValueToJson(m.max_relative_range)},
                         {"max_range_step", m.max_range_step ? json(*m.max_range_step) : json(nullptr)},
                         {"max_envelope", ValueToJson(max_env)},
                         {"steps", std::move(steps)}};
  }
  return {{"statistic", NoiseStatistic(e.safety_factor)},
          {"runs", e.runs},
          {"safety_factor", e.safety_factor},
          {"paths", e.paths},
          {"bitwise_identical", !e.first_divergent_step.has_value()},
          {"first_divergent_step", e.first_divergent_step ? json(*e.first_divergent_step) : json(nullptr)},
          {"first_divergent_metric", e.first_divergent_step ? json(e.first_divergent_metric) : json(nullptr)},
          {"metrics", std::move(metrics)}};
}

}  // namespace parity::logs
