#include "domain/logs/log_coverage.h"

#include <string>
#include <unordered_map>

namespace parity::logs {
namespace {

int64_t Mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

// The logging interval: the most common distance between consecutive steps, counted by
// runs of equal distances (one map update per run, not per step).
int64_t Interval(const std::vector<int64_t>& keys) {
  std::unordered_map<int64_t, int64_t> deltas;
  int64_t run_delta = 0, run_length = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    const int64_t d = keys[i] - keys[i - 1];
    if (d == run_delta && run_length > 0) {
      ++run_length;
      continue;
    }
    if (run_length > 0) deltas[run_delta] += run_length;
    run_delta = d;
    run_length = 1;
  }
  if (run_length > 0) deltas[run_delta] += run_length;
  int64_t best = 0, interval = 1;
  for (auto [d, n] : deltas) {
    if (d > 0 && (n > best || (n == best && d < interval))) {
      best = n;
      interval = d;
    }
  }
  return interval;
}

// The grid's phase: the remainder (mod interval) most logged steps share. torchtitan logs
// step 1 and every multiple of log_freq (1, 10, 20, ...): the phase is 0 and step 1 lies
// off the grid; Megatron logs multiples of log_interval.
int64_t Phase(const std::vector<int64_t>& keys, int64_t interval) {
  if (interval <= 1) return 0;
  std::unordered_map<int64_t, int64_t> count;
  for (int64_t k : keys) ++count[Mod(k, interval)];
  int64_t best = 0, phase = 0;
  for (auto [r, n] : count) {
    if (n > best || (n == best && r < phase)) {
      best = n;
      phase = r;
    }
  }
  return phase;
}

}  // namespace

void FillCoverage(ParseResult& result, const ParseOptions& options, std::optional<int64_t> total,
                  std::vector<ParseWarning>& warnings) {
  const MetricResult* primary = result.Find("loss");
  if (!primary && !result.metrics.empty()) primary = &result.metrics.front();
  StepCoverage& c = result.steps;
  c.expected_last = options.expected_steps ? options.expected_steps : total;
  if (!primary && result.logged_steps.empty()) return;
  if (primary) {
    c.duplicates = primary->issues.duplicates;
    c.restarts = primary->issues.restarts;
    if (primary->issues.duplicates > 0) {
      warnings.push_back({"duplicate_steps",
                          std::to_string(primary->issues.duplicates) + " steps of '" + primary->name +
                              "' were printed more than once (first: step " +
                              std::to_string(primary->issues.first_duplicate) + "); the value printed last is kept",
                          std::nullopt});
    }
  }
  // The steps the run logged: every metric line's (a skipped Megatron iteration prints no
  // loss but is a step), else the primary metric's (TensorBoard).
  const auto& keys = !result.logged_steps.empty() ? result.logged_steps : primary->series.keys;
  c.seen = static_cast<int64_t>(keys.size());
  if (keys.empty()) return;
  c.first = keys.front();
  c.last = keys.back();
  const int64_t interval = Interval(keys);
  c.interval = interval;
  const int64_t phase = Phase(keys, interval);
  // The grid: steps = phase (mod interval) from the first such step on; a first step off
  // the grid (torchtitan's step 1) is a logged step of its own.
  const int64_t grid_first = *c.first + Mod(phase - *c.first, interval);
  const bool first_off_grid = grid_first != *c.first;
  int64_t last = *c.last;
  if (c.expected_last && *c.expected_last > last) {
    warnings.push_back({"incomplete_run",
                        "the log ends at step " + std::to_string(*c.last) + " but " +
                            std::to_string(*c.expected_last) + " steps were expected",
                        std::nullopt});
    last = *c.expected_last;
  }
  const int64_t grid_last = last - Mod(last - phase, interval);  // the last grid step <= last
  c.expected_count = (first_off_grid ? 1 : 0) + (grid_last >= grid_first ? (grid_last - grid_first) / interval + 1 : 0);
  // Walk the logged steps, not the grid: a run cut short of a 3,000,000-step plan would
  // otherwise cost a loop over every planned step.
  int64_t expected = grid_first;  // the next grid step not yet accounted for
  auto note_missing_until = [&](int64_t end) {  // grid steps in [expected, end) are missing
    if (end <= expected) return;
    const int64_t n = (end - expected + interval - 1) / interval;
    for (int64_t s = expected; c.missing.size() < 100 && s < end; s += interval) c.missing.push_back(s);
    c.missing_count += n;
    expected += n * interval;
  };
  for (int64_t key : keys) {
    if (key > grid_last) break;
    if (key == expected) {  // the common case: the next grid step (no division needed)
      expected += interval;
      continue;
    }
    if (key < expected || Mod(key - phase, interval) != 0) continue;  // off the grid
    note_missing_until(key);
    expected = key + interval;
  }
  note_missing_until(grid_last + 1);
  if (c.missing_count > 0) {
    std::string grid = (first_off_grid ? std::to_string(*c.first) + ", " : std::string()) +
                       std::to_string(grid_first) + ", " + std::to_string(grid_first + interval) + ", ... " +
                       std::to_string(grid_last);
    warnings.push_back({"missing_steps",
                        std::to_string(c.missing_count) + " steps missing on the grid " + grid +
                            " (first missing: " + std::to_string(c.missing.front()) + ")",
                        std::nullopt});
  }
}

}  // namespace parity::logs
