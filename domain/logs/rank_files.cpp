#include "domain/logs/rank_files.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "domain/logs/compressed_log.h"
#include "domain/logs/log_ranks.h"
#include "domain/logs/sha256.h"

namespace parity::logs {

namespace fs = std::filesystem;

namespace {

// The file name without the extensions a log goes by (train_3.log.gz -> train_3).
std::string Stem(const fs::path& path) {
  std::string name = WithoutCompressionSuffix(path.filename().string());
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos && dot > 0) name.resize(dot);
  return name;
}

std::optional<int> ToRank(std::string_view digits) {
  if (digits.empty() || digits.size() > 7) return std::nullopt;  // no run has 10^7 ranks
  int v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// "rank3", "rank_3", "Rank-3" in `name`: the number after the last such word.
std::optional<int> AfterRankWord(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  std::optional<int> found;
  for (size_t at = lower.find("rank"); at != std::string::npos; at = lower.find("rank", at + 1)) {
    size_t i = at + 4;
    if (i < lower.size() && (lower[i] == '_' || lower[i] == '-')) ++i;
    size_t j = i;
    while (j < lower.size() && IsDigit(lower[j])) ++j;
    if (j > i) found = ToRank(std::string_view(lower).substr(i, j - i));
  }
  return found;
}

std::optional<int> LastNumber(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && !IsDigit(name[end - 1])) --end;
  size_t begin = end;
  while (begin > 0 && IsDigit(name[begin - 1])) --begin;
  return ToRank(std::string_view(name).substr(begin, end - begin));
}

bool AllDigits(const std::string& s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit); }

}  // namespace

std::optional<int> RankFromPath(const fs::path& path) {
  const std::string stem = Stem(path);
  if (auto r = AfterRankWord(stem)) return r;
  if (auto r = LastNumber(stem)) return r;
  for (fs::path dir = path.parent_path(); !dir.empty() && dir != dir.parent_path(); dir = dir.parent_path()) {
    if (AllDigits(dir.filename().string())) return ToRank(dir.filename().string());
  }
  return std::nullopt;
}

Result<ParseResult> MergeRankLogs(std::vector<ParseResult> files, const std::string& where,
                                  std::optional<int> asked_rank) {
  if (files.empty()) return InvalidArgument(where + " holds no log to read");
  std::map<int, std::vector<MetricResult>> by_rank;
  std::map<int, size_t> owner;  // rank -> the file its metrics come from
  ParseResult out;
  out.path = where;
  out.text_log = true;
  bool all_hashed = true;
  std::string manifest;
  for (size_t i = 0; i < files.size(); ++i) {
    ParseResult& f = files[i];
    LogSource source{f.path, f.sha256, f.bytes, {}};
    std::optional<int> path_rank;
    const bool prefixed = !f.ranks_seen.empty() && f.rank.has_value();
    if (!prefixed) path_rank = RankFromPath(f.path);
    auto take = [&](int rank, std::vector<MetricResult> metrics) -> Status {
      if (metrics.empty()) return Status::Ok();
      if (auto it = owner.find(rank); it != owner.end()) {
        return InvalidArgument("two logs of " + where + " hold the metrics of rank " + std::to_string(rank) + ": " +
                               files[it->second].path + " and " + f.path)
            .WithHint("pass one run's files (torchrun numbers each node's ranks from 0: read one node's "
                      "folder at a time), or rename the files rank_<N>.log by global rank");
      }
      owner[rank] = i;
      source.ranks.push_back(rank);
      by_rank[rank] = std::move(metrics);
      return Status::Ok();
    };
    if (prefixed) {
      PARITY_RETURN_IF_ERROR(take(*f.rank, std::move(f.metrics)));
      for (auto& other : f.other_ranks) PARITY_RETURN_IF_ERROR(take(other.rank, std::move(other.metrics)));
    } else if (!f.metrics.empty()) {
      if (!path_rank) {
        return InvalidArgument("cannot tell which rank " + f.path + " (in " + where +
                               ") is: its lines carry no [rankN]: prefix and its path names no rank")
            .WithHint("name per-rank logs by rank (rank_<N>.log, train_<N>.log, <N>/stdout.log), or pass one file");
      }
      PARITY_RETURN_IF_ERROR(take(*path_rank, std::move(f.metrics)));
    }
    // What is not series: every file's, each naming where it came from.
    const std::string name = fs::path(f.path).filename().string();
    for (auto& e : f.errors) {
      if (!e.rank) e.rank = path_rank;
      out.errors.push_back(std::move(e));
    }
    out.errors_total += f.errors_total;
    for (const auto& [kind, n] : f.error_counts) out.error_counts[kind] += n;
    for (auto& w : f.warnings) {
      w.message = name + ": " + w.message;
      out.warnings.push_back(std::move(w));
    }
    for (auto& record : f.probes.records) out.probes.Add(std::move(record));
    for (auto& m : f.probes.malformed) out.probes.AddMalformed(m.line, name + ": " + m.error);
    out.probes.malformed_total += f.probes.malformed_total - static_cast<int64_t>(f.probes.malformed.size());
    out.probes.dropped += f.probes.dropped;
    if (f.success_marker && !out.success_marker) {
      out.success_marker = true;
      out.success_line = f.success_line;
      out.success_text = name + ": " + f.success_text;
    }
    for (const auto& m : f.available_metrics) {
      if (std::find(out.available_metrics.begin(), out.available_metrics.end(), m) == out.available_metrics.end()) {
        out.available_metrics.push_back(m);
      }
    }
    out.bytes += f.bytes;
    out.lines += f.lines;
    if (f.sha256.empty()) all_hashed = false;
    manifest += f.sha256 + "  " + f.path + "\n";
    out.sources.push_back(std::move(source));
  }
  if (all_hashed) {
    Sha256 digest;
    digest.Update(manifest);
    out.sha256 = digest.HexDigest();
  }

  std::vector<std::vector<MetricResult>*> groups;
  for (auto& [rank, metrics] : by_rank) groups.push_back(&metrics);
  MarkPlaceholders(groups);
  std::vector<int> ranks;  // sorted: the map's keys
  for (const auto& [rank, metrics] : by_rank) ranks.push_back(rank);
  std::optional<int> chosen;
  if (asked_rank) {
    if (!by_rank.count(*asked_rank)) {
      return NotFound("rank " + std::to_string(*asked_rank) + " printed no metrics in " + where +
                      (ranks.empty() ? std::string(" (no file did)") : " (ranks with metrics: " + RankList(ranks) + ")"))
          .WithHint("pass one of those ranks, or leave rank out to compare every rank");
    }
    chosen = asked_rank;
  } else if (!by_rank.empty()) {
    bool any_loss = false;
    for (const auto& [rank, metrics] : by_rank) {
      for (const auto& m : metrics) any_loss = any_loss || m.name == "loss";
    }
    chosen = FirstMeaningfulRank(by_rank, any_loss ? "loss" : by_rank.begin()->second.front().name);
    if (!chosen) chosen = by_rank.begin()->first;
  }

  if (chosen) {
    ParseResult& own = files[owner[*chosen]];
    out.format = own.format;
    out.format_detail = own.format_detail;
    out.steps = own.steps;
    out.logged_steps = own.logged_steps;
    out.rank = chosen;
    out.metrics = std::move(by_rank[*chosen]);
    for (auto& [rank, metrics] : by_rank) {
      if (rank != *chosen) out.other_ranks.push_back({rank, std::move(metrics)});
    }
    std::set<std::string> formats;
    for (const auto& [rank, i] : owner) formats.insert(FormatName(files[i].format));
    if (formats.size() > 1) {
      std::string list;
      for (const auto& f : formats) list += (list.empty() ? "" : ", ") + f;
      out.warnings.push_back({"mixed_formats", "the logs of " + where + " are in different formats (" + list +
                                                   "); rank " + std::to_string(*chosen) + "'s file decides the format",
                              std::nullopt});
    }
  } else {
    out.format = files.front().format;
    out.format_detail = files.front().format_detail;
    out.steps = files.front().steps;
  }
  out.ranks_seen = ranks;
  WarnPlaceholders(out, out.warnings);
  if (ranks.size() > 1) {
    out.warnings.push_back({"multiple_ranks",
                            std::to_string(files.size()) + " logs of " + where + " hold the metrics of ranks " +
                                RankList(ranks) + "; rank " + std::to_string(*chosen) +
                                "'s series are the result's, every other rank's are in other_ranks "
                                "(compare_logs compares every rank)",
                            std::nullopt});
  }
  return out;
}

}  // namespace parity::logs
