#include "domain/logs/log_ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "support/utf8.h"

namespace parity::logs {
namespace {

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b;
}

bool Varies(const KeyedSeries& s) {
  for (double v : s.values) {
    if (!SameValue(v, s.values.front())) return true;
  }
  return false;
}

}  // namespace

bool IsConstantSeries(const KeyedSeries& series) { return series.size() >= 2 && !Varies(series); }

void MarkPlaceholders(std::vector<std::vector<MetricResult>*>& groups) {
  std::set<std::string> varying;
  for (const auto* g : groups) {
    for (const auto& m : *g) {
      if (Varies(m.series)) varying.insert(m.name);
    }
  }
  for (auto* g : groups) {
    for (auto& m : *g) {
      m.placeholder = varying.count(m.name) > 0 && IsConstantSeries(m.series);
    }
  }
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

namespace {

std::vector<MetricResult> BuildMetrics(RankSeries& group, const std::vector<std::string>& order, bool exact_if_any) {
  std::vector<MetricResult> out;
  for (const auto& name : order) {
    auto it = std::find_if(group.series.begin(), group.series.end(), [&](const auto& p) { return p.first == name; });
    if (it == group.series.end() || it->second.empty()) continue;
    MetricResult m;
    m.name = ToValidUtf8(name);  // a key as the log printed it: bytes, not always UTF-8
    m.source = "log";
    m.series = std::move(it->second);
    if (exact_if_any && std::find(m.series.decimals.begin(), m.series.decimals.end(), kExact) != m.series.decimals.end()) {
      std::fill(m.series.decimals.begin(), m.series.decimals.end(), kExact);
    }
    m.issues = Finalize(m.series);
    m.precision = SummarisePrecision(m.series);
    m.non_finite = CountNonFinite(m.series);
    if (auto na = group.not_available.find(name); na != group.not_available.end()) m.not_available = na->second;
    out.push_back(std::move(m));
  }
  return out;
}

void Merge(RankSeries& into, RankSeries& from) {
  for (auto& [name, s] : from.series) {
    KeyedSeries& target = into.Get(name);
    for (size_t i = 0; i < s.size(); ++i) target.Add(s.keys[i], s.values[i], s.decimals[i]);
  }
  for (auto& [name, n] : from.not_available) into.not_available[name] += n;
  into.line_steps.insert(into.line_steps.end(), from.line_steps.begin(), from.line_steps.end());
  into.metric_lines += from.metric_lines;
  if (!into.total_steps) into.total_steps = from.total_steps;
}

}  // namespace

std::optional<int> FirstMeaningfulRank(const std::map<int, std::vector<MetricResult>>& built,
                                       const std::string& primary) {
  for (const auto& [rank, metrics] : built) {
    for (const auto& m : metrics) {
      if (m.name == primary && !m.placeholder) return rank;
    }
  }
  return std::nullopt;
}

void WarnPlaceholders(const ParseResult& result, std::vector<ParseWarning>& warnings) {
  // One placeholder warning per metric, naming the ranks on both sides.
  std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> by_metric;  // placeholder, varying
  std::map<std::string, double> constant_value;
  auto visit = [&](int rank, const std::vector<MetricResult>& metrics) {
    for (const auto& m : metrics) {
      if (m.placeholder) {
        by_metric[m.name].first.push_back(rank);
        constant_value[m.name] = m.series.values.front();
      } else {
        by_metric[m.name].second.push_back(rank);
      }
    }
  };
  if (result.rank) visit(*result.rank, result.metrics);
  for (const auto& r : result.other_ranks) visit(r.rank, r.metrics);
  for (auto& [name, ranks] : by_metric) {
    if (ranks.first.empty()) continue;
    std::sort(ranks.first.begin(), ranks.first.end());
    std::sort(ranks.second.begin(), ranks.second.end());
    char value[32];
    std::snprintf(value, sizeof value, "%g", constant_value[name]);
    warnings.push_back({"placeholder_series",
                        "'" + name + "' of rank(s) " + RankList(ranks.first) + " is " + value +
                            " at every step while rank(s) " + RankList(ranks.second) +
                            " vary: a placeholder (a pipeline stage that does not compute it), never compared" +
                            (result.rank ? "; rank " + std::to_string(*result.rank) + "'s series are the result's" : ""),
                        std::nullopt});
  }
}

const RankSeries* SelectRanks(std::map<int, RankSeries>& groups, const std::vector<std::string>& order,
                              std::optional<int> asked_rank, bool exact_if_any, ParseResult& result,
                              std::vector<ParseWarning>& warnings) {
  static RankSeries none;
  std::vector<int> keys;  // groups with metric lines, unprefixed (-1) first
  for (auto& [key, g] : groups) {
    if (g.metric_lines > 0) keys.push_back(key);
  }
  const bool has_unprefixed = !keys.empty() && keys.front() == -1;
  const bool has_prefixed = keys.size() > (has_unprefixed ? 1u : 0u);
  std::map<int, std::vector<MetricResult>> built;
  for (int key : keys) {
    if (key == -1 && has_prefixed) continue;  // joins the chosen rank below
    built[key] = BuildMetrics(groups[key], order, exact_if_any);
  }
  std::vector<std::vector<MetricResult>*> all;
  for (auto& [key, metrics] : built) all.push_back(&metrics);
  MarkPlaceholders(all);

  const std::string primary = std::find(order.begin(), order.end(), "loss") != order.end() ? "loss"
                              : order.empty()                                            ? ""
                                                                                         : order.front();
  std::optional<int> chosen;
  if (asked_rank) {
    if (groups.count(*asked_rank)) chosen = *asked_rank;
  } else if (!has_prefixed) {
    if (has_unprefixed) chosen = -1;
  } else {
    chosen = FirstMeaningfulRank(built, primary);  // `built` holds no unprefixed group here
    if (!chosen) chosen = has_unprefixed ? keys[1] : keys.front();
  }
  if (!chosen) {
    result.rank = asked_rank;
    return &none;
  }
  RankSeries& group = groups[*chosen];
  if (has_unprefixed && has_prefixed) {
    // Unprefixed metric lines (a launcher without --tee) count as the chosen rank's: put
    // its series back (BuildMetrics moved them out), add them, build again.
    std::map<std::string, bool> placeholder;
    for (auto& m : built[*chosen]) {
      placeholder[m.name] = m.placeholder;
      group.Get(m.name) = std::move(m.series);
    }
    Merge(group, groups[-1]);
    built[*chosen] = BuildMetrics(group, order, exact_if_any);
    for (auto& m : built[*chosen]) m.placeholder = placeholder[m.name];
  }
  result.rank = *chosen >= 0 ? std::optional<int>(*chosen) : std::nullopt;
  result.metrics = std::move(built[*chosen]);
  for (auto& [key, metrics] : built) {
    if (key == *chosen || key < 0 || metrics.empty()) continue;
    result.other_ranks.push_back({key, std::move(metrics)});
  }
  result.logged_steps = group.line_steps;
  std::sort(result.logged_steps.begin(), result.logged_steps.end());
  result.logged_steps.erase(std::unique(result.logged_steps.begin(), result.logged_steps.end()),
                            result.logged_steps.end());

  if (!asked_rank && *chosen > 0 && (!groups.count(0) || groups[0].metric_lines == 0)) {
    warnings.push_back({"rank_fallback",
                        "rank 0 printed no metric lines; rank " + std::to_string(*chosen) +
                            "'s are the result's series (pass rank to choose another)",
                        std::nullopt});
  }
  WarnPlaceholders(result, warnings);
  std::set<int> seen(result.ranks_seen.begin(), result.ranks_seen.end());
  if (seen.size() > 1) {
    warnings.push_back({"multiple_ranks",
                        "metric lines of " + std::to_string(seen.size()) + " ranks are interleaved in this log; " +
                            (asked_rank ? "only rank " + std::to_string(*asked_rank) + " (and unprefixed lines) was read"
                                        : "rank " + (result.rank ? std::to_string(*result.rank) : std::string("-")) +
                                              "'s series are the result's, every other rank's are in other_ranks "
                                              "(compare_logs compares every rank)"),
                        std::nullopt});
  }
  return &group;
}

}  // namespace parity::logs
