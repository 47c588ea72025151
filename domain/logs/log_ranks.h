// Every rank's series, kept apart while a text log is read, and the rules that turn them
// into a result: which rank's series are the result's own, and which series are
// placeholders. A placeholder is a series constant at every step while the same metric
// varies on another rank (torchtitan's non-last pipeline stages print loss -1.0); it never
// decides a verdict (compare_logs compares every rank that prints the metric).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domain/logs/log_result.h"

namespace parity::logs {

// One rank's metric lines as read (unprefixed lines form a group of their own).
struct RankSeries {
  std::optional<int> rank;  // nullopt: unprefixed lines
  std::vector<std::pair<std::string, KeyedSeries>> series;
  std::map<std::string, int64_t> not_available;  // "mfu: N/A": the metric had no value at a step
  std::vector<int64_t> line_steps;  // the step of every metric line, values or not
  int64_t metric_lines = 0;
  int64_t last_step = INT64_MIN;
  size_t last_line_values = 0;  // values the previous metric line carried
  std::optional<int64_t> total_steps;
  std::vector<ParseWarning> restarts;
  int64_t restart_count = 0;
  int64_t ordinal = 0;  // lines without a step number are numbered 1, 2, ...
  int64_t unnumbered = 0;

  KeyedSeries& Get(std::string_view name) {
    for (auto& [n, s] : series) {
      if (n == name) return s;
    }
    series.emplace_back(std::string(name), KeyedSeries{});
    return series.back().second;
  }
  const KeyedSeries* Find(std::string_view name) const {
    for (const auto& [n, s] : series) {
      if (n == name) return &s;
    }
    return nullptr;
  }
};

// Turns the groups into the result: builds each group's metrics for `order` (Finalize,
// precision, NaN/Inf, N/A counts; with `exact_if_any`, a series with one value stored in
// full is stored in full throughout: a metrics file writes every value the same way), marks
// placeholders, and picks the result's own group: the rank asked for; else the unprefixed
// lines when no line is prefixed; else the lowest rank whose `loss` (or first metric) is
// not a placeholder, else the lowest rank that printed metric lines. Unprefixed lines join
// that group. Fills result.metrics, other_ranks, rank, ranks_seen and logged_steps, adds
// the warnings (multiple_ranks, rank_fallback, placeholder_series), and returns the group.
// `groups` is keyed by rank, -1 for unprefixed lines.
const RankSeries* SelectRanks(std::map<int, RankSeries>& groups, const std::vector<std::string>& order,
                              std::optional<int> asked_rank, bool exact_if_any, ParseResult& result,
                              std::vector<ParseWarning>& warnings);

// Whether a series holds at least two points and every value is the same (NaN equal to NaN).
bool IsConstantSeries(const KeyedSeries& series);

// "0, 1, 3": ranks for messages.
std::string RankList(const std::vector<int>& ranks);

// The lowest rank of `built` whose `primary` metric is there and not a placeholder.
std::optional<int> FirstMeaningfulRank(const std::map<int, std::vector<MetricResult>>& built, const std::string& primary);

// Adds one placeholder_series warning per metric that is a placeholder on some rank of
// `result` (its own rank and other_ranks), naming the placeholder and the varying ranks.
void WarnPlaceholders(const ParseResult& result, std::vector<ParseWarning>& warnings);

// Sets `placeholder` on every metric of `groups` whose series is constant while the same
// metric's series on another group varies.
void MarkPlaceholders(std::vector<std::vector<MetricResult>*>& groups);

}  // namespace parity::logs
