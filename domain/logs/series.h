// A metric as a series of (step, value) points, plus how precisely each value was printed.
// The comparison core works on these and knows nothing of where they came from, so probe
// lines (inject_prints) and TensorBoard scalars are compared the same way as log metrics.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace parity::logs {

// How many decimal places a printed value carries: the value is known to within half a unit
// of 10^-decimals. kExact marks a value stored in full (TensorBoard float, Python repr).
using Decimals = int16_t;
inline constexpr Decimals kExact = std::numeric_limits<Decimals>::max();

// Half a unit in the last printed place: how far the true value may be from the printed one.
double HalfUnit(Decimals decimals);

struct KeyedSeries {
  std::vector<int64_t> keys;     // steps (or probe occurrence indices), ascending once Finalize()d
  std::vector<double> values;    // NaN and Inf kept as such
  std::vector<Decimals> decimals;

  size_t size() const { return keys.size(); }
  bool empty() const { return keys.empty(); }
  void Add(int64_t key, double value, Decimals d) {
    keys.push_back(key);
    values.push_back(value);
    decimals.push_back(d);
  }
};

// What Finalize found while putting a series in key order.
struct SeriesIssues {
  int64_t duplicates = 0;       // keys seen more than once (the last value is kept)
  int64_t first_duplicate = -1;
  int64_t restarts = 0;         // times the key went backwards (a resumed run)
  int64_t first_restart_from = -1, first_restart_to = -1;
};

// Sorts by key, keeping the value printed last for a repeated key (a run resumed from a
// checkpoint reprints steps; the later run is the one whose numbers count).
SeriesIssues Finalize(KeyedSeries& series);

struct PrecisionSummary {
  bool exact = false;            // every value stored in full
  int min_decimals = 0;          // the coarsest printed value (meaningful when !exact)
  int max_decimals = 0;
  bool varying = false;          // decimals differ between values (sci notation, repr)
};
PrecisionSummary SummarisePrecision(const KeyedSeries& series);

struct NonFinite {
  int64_t nan = 0, inf = 0;
};
NonFinite CountNonFinite(const KeyedSeries& series);

}  // namespace parity::logs
