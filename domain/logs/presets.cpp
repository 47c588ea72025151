#include "domain/logs/presets.h"

#include <algorithm>
#include <cmath>

namespace parity::logs {
namespace {

constexpr double kDefaultAbs = 1e-5;  // the premerge skill's bar, and parity's default

Status CheckTolerance(const Tolerance& t, const std::string& where) {
  if (!t.abs && !t.rel) return InvalidArgument(where + ": give abs, rel or both");
  for (auto bound : {t.abs, t.rel}) {
    if (bound && (!std::isfinite(*bound) || *bound < 0))
      return InvalidArgument(where + ": bounds must be finite and >= 0");
  }
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& PresetNames() {
  static const std::vector<std::string> names = {"premerge", "precision-comparer", "torchtitan-npu"};
  return names;
}

Result<Criteria> BuildCriteria(const CriteriaRequest& request) {
  Criteria out;
  std::vector<std::string> metrics = request.metrics;
  if (metrics.empty()) metrics = {"loss", "grad_norm"};
  const std::string preset = request.preset.value_or("");
  if (!preset.empty() && std::find(PresetNames().begin(), PresetNames().end(), preset) == PresetNames().end()) {
    return InvalidArgument("unknown preset \"" + preset +
                           "\"; expected one of: premerge, precision-comparer, torchtitan-npu");
  }
  if (request.tolerance) PARITY_RETURN_IF_ERROR(CheckTolerance(*request.tolerance, "tolerance"));
  for (const auto& [metric, t] : request.tolerances) {
    PARITY_RETURN_IF_ERROR(CheckTolerance(t, "tolerances." + metric));
  }
  if (request.probe_tolerance) PARITY_RETURN_IF_ERROR(CheckTolerance(*request.probe_tolerance, "probe_tolerance"));

  out.require_success_marker = preset == "precision-comparer";
  if (out.require_success_marker) out.success_markers = {"training success"};
  out.probe_tolerance = request.probe_tolerance ? request.probe_tolerance : request.tolerance;
  for (const auto& metric : metrics) {
    MetricCriteria c;
    c.metric = metric;
    c.bitwise = request.bitwise;
    if (preset == "torchtitan-npu") {
      // Aggregate criteria only; a per-step tolerance may be added on top.
      if (metric == "loss") {
        c.aggregates = {{AggregateKind::kFirstAbs, 0.005, true},
                        {AggregateKind::kFirstRel, 0.005, true},
                        {AggregateKind::kMeanAbs, 0.01, true},
                        {AggregateKind::kMeanRel, 0.01, true}};
      } else if (metric == "grad_norm") {
        c.aggregates = {{AggregateKind::kMeanRel, 0.10, false}};
      }
      c.nan_inf_must_match = true;
    } else {
      c.per_step = Tolerance{preset == "precision-comparer" ? 1e-3 : kDefaultAbs, std::nullopt};
    }
    if (request.tolerance) c.per_step = request.tolerance;
    if (auto it = request.tolerances.find(metric); it != request.tolerances.end()) c.per_step = it->second;
    if (preset == "torchtitan-npu" && c.aggregates.empty() && !c.per_step && !c.bitwise) {
      c.per_step = Tolerance{kDefaultAbs, std::nullopt};
    }
    out.metrics.push_back(std::move(c));
  }
  return out;
}

}  // namespace parity::logs
