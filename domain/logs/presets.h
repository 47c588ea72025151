// compare_logs' criteria: the named presets and the user's own tolerances.
//  premerge            loss and grad_norm: every step |diff| <= 1e-5; NaN/Inf counts equal
//                      (the premerge-accuracy-check skill's pass criteria).
//  precision-comparer  loss and grad_norm: every step |diff| <= 1e-3 (PrecisionComparer's
//                      default tolerance); both logs must carry "training success", the
//                      line PrecisionComparer waits for (README, workflow step 4), else
//                      INCONCLUSIVE. Another trainer's end line (torchtitan's "Training
//                      completed") does not count unless the user names it (success_markers).
//  torchtitan-npu      loss: first-step abs < 0.005 and rel < 0.5%, mean abs < 0.01 and
//                      rel < 1%; grad_norm: mean rel <= 10% (torchtitan-npu accuracy-debug
//                      skill, section 6.2).
// Without a preset: loss and grad_norm, every step |diff| <= 1e-5.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "domain/logs/compare.h"
#include "support/status.h"

namespace parity::logs {

struct CriteriaRequest {
  std::optional<std::string> preset;
  std::vector<std::string> metrics;            // empty: the preset's (or loss, grad_norm)
  std::optional<Tolerance> tolerance;          // every metric's per-step tolerance
  std::map<std::string, Tolerance> tolerances; // per metric, over `tolerance`
  std::optional<Tolerance> probe_tolerance;    // the probes' statistics (default: `tolerance`)
  bool bitwise = false;
};

struct Criteria {
  std::vector<MetricCriteria> metrics;
  bool require_success_marker = false;
  // The lines that count as "finished" for require_success_marker (the preset's own).
  std::vector<std::string> success_markers;
  // The user's `probe_tolerance`, else their `tolerance`, if any: probe statistics are
  // reported against it and the first probe beyond it is named (probe equality itself
  // stays bitwise).
  std::optional<Tolerance> probe_tolerance;
};

const std::vector<std::string>& PresetNames();

// Errors name the bad preset or tolerance (e.g. a negative bound).
Result<Criteria> BuildCriteria(const CriteriaRequest& request);

}  // namespace parity::logs
