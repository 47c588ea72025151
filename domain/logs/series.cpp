#include "domain/logs/series.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace parity::logs {

double HalfUnit(Decimals decimals) {
  if (decimals == kExact) return 0.0;
  // Called per compared value: the usual range comes from a table, not std::pow.
  static const auto table = [] {
    std::array<double, 64> t{};
    for (int d = -16; d < 48; ++d) t[d + 16] = 0.5 * std::pow(10.0, -static_cast<double>(d));
    return t;
  }();
  if (decimals >= -16 && decimals < 48) return table[decimals + 16];
  return 0.5 * std::pow(10.0, -static_cast<double>(decimals));
}

SeriesIssues Finalize(KeyedSeries& s) {
  SeriesIssues issues;
  const size_t n = s.size();
  bool sorted_unique = true;
  for (size_t i = 1; i < n; ++i) {
    if (s.keys[i] <= s.keys[i - 1]) {
      sorted_unique = false;
      if (s.keys[i] < s.keys[i - 1]) {
        if (issues.restarts++ == 0) {
          issues.first_restart_from = s.keys[i - 1];
          issues.first_restart_to = s.keys[i];
        }
      }
    }
  }
  if (sorted_unique) return issues;

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Stable so that, among equal keys, the last printed stays last.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return s.keys[a] < s.keys[b]; });
  KeyedSeries out;
  out.keys.reserve(n);
  out.values.reserve(n);
  out.decimals.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t j = order[i];
    if (!out.keys.empty() && out.keys.back() == s.keys[j]) {
      if (issues.duplicates++ == 0) issues.first_duplicate = s.keys[j];
      out.values.back() = s.values[j];
      out.decimals.back() = s.decimals[j];
      continue;
    }
    out.Add(s.keys[j], s.values[j], s.decimals[j]);
  }
  s = std::move(out);
  return issues;
}

PrecisionSummary SummarisePrecision(const KeyedSeries& s) {
  PrecisionSummary p;
  bool any_printed = false;
  for (Decimals d : s.decimals) {
    if (d == kExact) continue;
    if (!any_printed) {
      p.min_decimals = p.max_decimals = d;
      any_printed = true;
    } else {
      p.min_decimals = std::min<int>(p.min_decimals, d);
      p.max_decimals = std::max<int>(p.max_decimals, d);
    }
  }
  p.exact = !any_printed && !s.empty();
  p.varying = p.min_decimals != p.max_decimals;
  return p;
}

NonFinite CountNonFinite(const KeyedSeries& s) {
  NonFinite c;
  for (double v : s.values) {
    if (std::isnan(v)) ++c.nan;
    else if (std::isinf(v)) ++c.inf;
  }
  return c;
}

}  // namespace parity::logs
