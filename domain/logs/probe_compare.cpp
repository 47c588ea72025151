#include "domain/logs/probe_compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

namespace parity::logs {

namespace {

using json = nlohmann::json;

// The fields that decide equality, in the order they are listed when they differ.
constexpr std::array<const char*, 7> kDecisive = {"hash", "value", "error", "type", "dtype", "shape", "length"};
constexpr std::array<const char*, 5> kKeyFields = {"id", "when", "name", "call", "rank"};
constexpr std::array<const char*, 5> kStats = {"sum", "mean", "min", "max", "norm"};

template <size_t N>
bool In(const std::array<const char*, N>& set, const std::string& name) {
  return std::any_of(set.begin(), set.end(), [&](const char* s) { return name == s; });
}

const json& FieldOrNull(const json& record, const std::string& field) {
  static const json kNull = nullptr;
  auto it = record.find(field);
  return it == record.end() ? kNull : *it;
}

// Fields whose printed value differs (key fields aside): decisive ones first, then the rest
// alphabetically (the record's own order).
std::vector<std::string> DifferingFields(const json& b, const json& c) {
  std::vector<std::string> decisive, other;
  auto consider = [&](const std::string& field) {
    if (In(kKeyFields, field)) return;
    if (FieldOrNull(b, field) == FieldOrNull(c, field)) return;
    auto& into = In(kDecisive, field) ? decisive : other;
    if (std::find(into.begin(), into.end(), field) == into.end()) into.push_back(field);
  };
  for (auto it = b.begin(); it != b.end(); ++it) consider(it.key());
  for (auto it = c.begin(); it != c.end(); ++it) consider(it.key());
  std::sort(decisive.begin(), decisive.end(), [](const std::string& x, const std::string& y) {
    auto rank = [](const std::string& f) {
      return std::find_if(kDecisive.begin(), kDecisive.end(), [&](const char* d) { return f == d; }) -
             kDecisive.begin();
    };
    return rank(x) < rank(y);
  });
  decisive.insert(decisive.end(), other.begin(), other.end());
  return decisive;
}

bool Diverges(const std::vector<std::string>& fields) {
  return std::any_of(fields.begin(), fields.end(), [](const std::string& f) { return In(kDecisive, f); });
}

std::vector<ProbeStatDiff> StatDiffs(const json& b, const json& c, const Tolerance& tolerance) {
  std::vector<ProbeStatDiff> out;
  for (const char* stat : kStats) {
    const json& bv = FieldOrNull(b, stat);
    const json& cv = FieldOrNull(c, stat);
    if (bv.is_null() && cv.is_null()) continue;
    ProbeStatDiff d;
    d.stat = stat;
    d.baseline = bv;
    d.candidate = cv;
    if (bv.is_number() && cv.is_number()) {
      const double x = bv.get<double>(), y = cv.get<double>();
      d.abs = std::fabs(y - x);
      d.rel = *d.abs == 0 ? 0.0 : *d.abs / std::fabs(x);  // inf when the baseline is 0
      d.within = (tolerance.abs && *d.abs <= *tolerance.abs) || (tolerance.rel && *d.rel <= *tolerance.rel);
    } else {
      d.within = bv == cv;  // "nan" against "nan", null against null
    }
    out.push_back(std::move(d));
  }
  return out;
}

// A pair differs only within the tolerance when nothing but its hash and statistics differ
// and every statistic is within (a tensor whose bytes moved a little).
bool WithinTolerance(const std::vector<std::string>& fields, const std::vector<ProbeStatDiff>& stats) {
  for (const auto& f : fields) {
    if (f != "hash" && In(kDecisive, f)) return false;
  }
  return !stats.empty() && std::all_of(stats.begin(), stats.end(), [](const ProbeStatDiff& s) { return s.within; });
}

// What a person compares at a glance: the repr of a value; a tensor's sum and hash prefix.
std::string DescribeRecord(const ProbeRecord& r) {
  const json& rec = r.record;
  if (auto it = rec.find("value"); it != rec.end()) return it->dump();
  if (auto it = rec.find("error"); it != rec.end()) return "error " + it->dump();
  std::string out;
  if (auto it = rec.find("sum"); it != rec.end()) out = "sum " + it->dump();
  if (auto it = rec.find("hash"); it != rec.end() && it->is_string()) {
    out += (out.empty() ? "" : " ") + std::string("hash ") + it->get<std::string>().substr(0, 12);
  }
  if (auto it = rec.find("length"); out.empty() && it != rec.end()) out = "length " + it->dump();
  return out.empty() ? rec.dump() : out;
}

json DivergenceJson(const ProbeDivergence& d) {
  const ProbeRecord& b = d.baseline;
  json j = {{"key", b.Key()},
            {"id", b.id},
            {"site", b.site},
            {"when", b.when},
            {"name", b.name},
            {"call", b.call},
            {"rank", b.rank ? json(*b.rank) : json(nullptr)},
            {"fields", d.fields},
            {"baseline", b.record},
            {"candidate", d.candidate.record},
            {"baseline_line", b.line},
            {"candidate_line", d.candidate.line},
            {"note", d.note.empty() ? json(nullptr) : json(d.note)}};
  if (d.stats_within_tolerance) {
    json stats = json::object();
    for (const auto& s : d.stats) {
      stats[s.stat] = {{"baseline", s.baseline},
                       {"candidate", s.candidate},
                       {"abs", s.abs ? json(*s.abs) : json(nullptr)},
                       {"rel", s.rel && std::isfinite(*s.rel) ? json(*s.rel) : json(nullptr)},
                       {"within", s.within}};
    }
    j["stats"] = std::move(stats);
    j["stats_within_tolerance"] = *d.stats_within_tolerance;
    j["within_tolerance"] = d.within_tolerance;
  }
  return j;
}

}  // namespace

ProbeComparison CompareProbes(const ProbeLog& baseline, const ProbeLog& candidate,
                              const std::optional<Tolerance>& tolerance) {
  ProbeComparison out;
  out.tolerance = tolerance;
  out.baseline_count = static_cast<int64_t>(baseline.records.size());
  out.candidate_count = static_cast<int64_t>(candidate.records.size());

  std::unordered_map<std::string, std::vector<size_t>> by_key;  // candidate occurrences, in order
  for (size_t i = 0; i < candidate.records.size(); ++i) by_key[candidate.records[i].Key()].push_back(i);
  std::unordered_map<std::string, size_t> seen;  // baseline occurrences so far
  std::vector<bool> paired(candidate.records.size(), false);
  std::vector<std::string> unpaired_before;  // before/entry probes the candidate lacks

  for (const ProbeRecord& b : baseline.records) {
    const std::string key = b.Key();
    const size_t occurrence = seen[key]++;
    auto it = by_key.find(key);
    if (it == by_key.end() || occurrence >= it->second.size()) {
      if (out.unmatched_baseline.size() < ProbeComparison::kMaxUnmatched) out.unmatched_baseline.push_back(key);
      ++out.unmatched_baseline_count;
      if ((b.when == "before" || b.when == "entry") && out.divergent_count == 0) {
        unpaired_before.push_back(key + " (baseline line " + std::to_string(b.line) + ", " + b.site + ")");
      }
      continue;
    }
    const size_t ci = it->second[occurrence];
    paired[ci] = true;
    ++out.matched;
    const ProbeRecord& c = candidate.records[ci];
    std::vector<std::string> fields = DifferingFields(b.record, c.record);
    if (!Diverges(fields)) continue;
    ++out.divergent_count;
    if (out.divergent.size() >= ProbeComparison::kMaxDivergent && (!tolerance || out.first_beyond_tolerance)) {
      if (tolerance && !WithinTolerance(fields, StatDiffs(b.record, c.record, *tolerance))) ++out.beyond_tolerance_count;
      continue;
    }
    ProbeDivergence d{b, c, std::move(fields), {}, std::nullopt, false, {}};
    if (tolerance) {
      d.stats = StatDiffs(b.record, c.record, *tolerance);
      d.stats_within_tolerance =
          std::all_of(d.stats.begin(), d.stats.end(), [](const ProbeStatDiff& s) { return s.within; });
      d.within_tolerance = WithinTolerance(d.fields, d.stats);
      if (!d.within_tolerance) ++out.beyond_tolerance_count;
    }
    if (out.divergent_count == 1 && !unpaired_before.empty()) {
      d.note = "earlier before/entry probes have no partner in the candidate (its execution took another path "
               "before this point): " + unpaired_before.front() +
               (unpaired_before.size() > 1 ? " and " + std::to_string(unpaired_before.size() - 1) + " more" : "");
    }
    if (tolerance && !d.within_tolerance && !out.first_beyond_tolerance) out.first_beyond_tolerance = d;
    if (out.divergent.size() < ProbeComparison::kMaxDivergent) out.divergent.push_back(std::move(d));
  }
  for (size_t i = 0; i < candidate.records.size(); ++i) {
    if (paired[i]) continue;
    if (out.unmatched_candidate.size() < ProbeComparison::kMaxUnmatched)
      out.unmatched_candidate.push_back(candidate.records[i].Key());
    ++out.unmatched_candidate_count;
  }

  auto keep_malformed = [](const ProbeLog& log, std::vector<MalformedProbe>& into) {
    for (const auto& m : log.malformed) {
      if (into.size() >= ProbeComparison::kMaxMalformed) break;
      into.push_back(m);
    }
  };
  keep_malformed(baseline, out.malformed_baseline);
  keep_malformed(candidate, out.malformed_candidate);
  out.malformed_count = baseline.malformed_total + candidate.malformed_total;

  if (out.divergent_count == 0 && !unpaired_before.empty()) {
    out.notes.push_back("no matched probe differs, but " + std::to_string(unpaired_before.size()) +
                        " before/entry probe(s) of the baseline have no partner in the candidate; first: " +
                        unpaired_before.front());
  }
  for (auto [side, log] : {std::pair{"baseline", &baseline}, std::pair{"candidate", &candidate}}) {
    if (log->malformed_total > 0) {
      out.notes.push_back(std::string(side) + " log has " + std::to_string(log->malformed_total) +
                          " malformed PARITY_PROBE line(s); first at line " +
                          std::to_string(log->malformed.front().line) + ": " + log->malformed.front().error);
    }
    if (log->dropped > 0) {
      out.notes.push_back(std::string(side) + " log has more than " + std::to_string(ProbeLog::kMaxProbeRecords) +
                          " probe lines; " + std::to_string(log->dropped) +
                          " later ones were not compared (probe fewer calls: inject_prints' calls option)");
    }
  }
  return out;
}

std::string ProbeComparison::Summary() const {
  std::string s = "probes: " + std::to_string(matched) + " matched (baseline " + std::to_string(baseline_count) +
                  ", candidate " + std::to_string(candidate_count) + "), " + std::to_string(divergent_count) +
                  " divergent";
  if (!divergent.empty()) {
    const ProbeDivergence& d = divergent.front();
    std::string fields;
    for (const auto& f : d.fields) fields += (fields.empty() ? "" : ", ") + f;
    s += "; first: " + d.baseline.Key() + " at " + d.baseline.site + " (" + fields + ": " +
         DescribeRecord(d.baseline) + " vs " + DescribeRecord(d.candidate) + ")";
  }
  if (unmatched_baseline_count + unmatched_candidate_count > 0) {
    s += "; unmatched: " + std::to_string(unmatched_baseline_count) + " baseline, " +
         std::to_string(unmatched_candidate_count) + " candidate";
  }
  if (malformed_count > 0) s += "; " + std::to_string(malformed_count) + " malformed";
  return s;
}

json ProbeComparisonJson(const ProbeComparison& c) {
  json next = json::array();
  for (size_t i = 1; i < c.divergent.size(); ++i) next.push_back(DivergenceJson(c.divergent[i]));
  json malformed = json::array();
  for (auto [side, list] : {std::pair{"baseline", &c.malformed_baseline}, std::pair{"candidate", &c.malformed_candidate}}) {
    for (const auto& m : *list) malformed.push_back({{"side", side}, {"line", m.line}, {"error", m.error}});
  }
  json out = {{"baseline_count", c.baseline_count},
          {"candidate_count", c.candidate_count},
          {"matched", c.matched},
          {"divergent_count", c.divergent_count},
          {"first_divergent", c.divergent.empty() ? json(nullptr) : DivergenceJson(c.divergent.front())},
          {"next_divergent", std::move(next)},
          {"unmatched_baseline", c.unmatched_baseline},
          {"unmatched_candidate", c.unmatched_candidate},
          {"unmatched_baseline_count", c.unmatched_baseline_count},
          {"unmatched_candidate_count", c.unmatched_candidate_count},
          {"malformed", std::move(malformed)},
          {"malformed_count", c.malformed_count},
          {"notes", c.notes}};
  if (c.tolerance) {
    out["tolerance"] = {{"abs", c.tolerance->abs ? json(*c.tolerance->abs) : json(nullptr)},
                        {"rel", c.tolerance->rel ? json(*c.tolerance->rel) : json(nullptr)}};
    out["beyond_tolerance_count"] = c.beyond_tolerance_count;
    out["first_beyond_tolerance"] = c.first_beyond_tolerance ? DivergenceJson(*c.first_beyond_tolerance) : json(nullptr);
  }
  return out;
}

}  // namespace parity::logs
