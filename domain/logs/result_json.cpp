#include "domain/logs/result_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "domain/logs/compare.h"
#include "domain/logs/series_file.h"
#include "support/utf8.h"

namespace parity::logs {
namespace {

json OptionalInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

json MetricToJson(const MetricResult& m, bool include_series, size_t inline_points) {
  const auto& s = m.series;
  json j = {{"name", m.name},
            {"source", m.source},
            {"points", s.size()},
            {"full_precision", m.precision.exact},
            {"printed_decimals", m.precision.exact ? json(nullptr) : json(m.precision.min_decimals)},
            {"decimals_vary", m.precision.varying},
            {"resolution", m.precision.exact ? 0.0 : HalfUnit(static_cast<Decimals>(m.precision.min_decimals))},
            {"nan", m.non_finite.nan},
            {"inf", m.non_finite.inf},
            {"duplicates", m.issues.duplicates},
            {"restarts", m.issues.restarts},
            {"placeholder", m.placeholder},
            {"not_available", m.not_available}};
  if (!s.empty()) {
    j["first"] = {{"step", s.keys.front()}, {"value", ValueToJson(s.values.front())}};
    j["last"] = {{"step", s.keys.back()}, {"value", ValueToJson(s.values.back())}};
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    int64_t finite = 0;
    for (double v : s.values) {
      if (!std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      ++finite;
    }
    if (finite > 0) {
      j["min"] = lo;
      j["max"] = hi;
      j["mean"] = sum / static_cast<double>(finite);
    }
  }
  if (include_series && s.size() > inline_points) {
    // Too long to return inline: an evenly spaced sample (first and last included); the
    // whole series is in the file parse_log wrote (series_file).
    j["series_inline"] = false;
    json steps = json::array(), values = json::array();
    constexpr size_t kSample = 100;
    for (size_t k = 0; k < kSample; ++k) {
      const size_t i = k * (s.size() - 1) / (kSample - 1);
      steps.push_back(s.keys[i]);
      values.push_back(ValueToJson(s.values[i]));
    }
    j["sample"] = {{"steps", std::move(steps)}, {"values", std::move(values)}};
  } else if (include_series) {
    j["steps"] = s.keys;
    json values = json::array();
    for (double v : s.values) values.push_back(ValueToJson(v));
    j["values"] = std::move(values);
    if (m.precision.varying || (!m.precision.exact && std::count(s.decimals.begin(), s.decimals.end(), kExact) > 0)) {
      json decimals = json::array();
      for (Decimals d : s.decimals) decimals.push_back(d == kExact ? json(nullptr) : json(d));
      j["decimals"] = std::move(decimals);
    }
  }
  return j;
}

Result<double> ValueFromJson(const json& v, const std::string& where) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan" || s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-inf" || s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return InvalidArgument(where + ": expected a number or \"nan\" / \"inf\" / \"-inf\", got " + v.dump());
}

json ProbesToJson(const ProbeLog& probes, bool include_records) {
  json malformed = json::array();
  for (const auto& m : probes.malformed) malformed.push_back({{"line", m.line}, {"error", m.error}});
  json j = {{"count", probes.records.size()},
            {"malformed_count", probes.malformed_total},
            {"malformed", std::move(malformed)},
            {"dropped", probes.dropped}};
  if (include_records) {
    json records = json::array();
    for (const auto& r : probes.records) records.push_back({{"line", r.line}, {"record", r.record}});
    j["records"] = std::move(records);
  }
  return j;
}

// parse_log's "probes" back; records are needed to compare them.
Status ProbesFromJson(const json& v, const std::string& where, ProbeLog& out) {
  if (!v.is_object()) return InvalidArgument(where + ": expected object");
  if (v.value("count", 0) > 0 && !v.contains("records"))
    return InvalidArgument(where + ": needs \"records\" to compare the probes; run parse_log with series=true");
  if (v.contains("records")) {
    const json& records = v["records"];
    if (!records.is_array()) return InvalidArgument(where + ".records: expected array");
    for (size_t i = 0; i < records.size(); ++i) {
      const std::string at = where + ".records[" + std::to_string(i) + "]";
      const json& r = records[i];
      if (!r.is_object() || !r.contains("line") || !r["line"].is_number_integer() || !r.contains("record"))
        return InvalidArgument(at + ": expected {\"line\": integer, \"record\": object}");
      std::string error;
      auto record = ProbeFromRecord(r["record"], std::nullopt, r["line"].get<int64_t>(), error);
      if (!record) return InvalidArgument(at + ".record: " + error);
      out.Add(std::move(*record));
    }
  }
  if (v.contains("malformed") && v["malformed"].is_array()) {
    for (const json& m : v["malformed"]) {
      if (m.is_object()) out.AddMalformed(m.value("line", int64_t{0}), m.value("error", std::string()));
    }
  }
  const int64_t total = v.value("malformed_count", out.malformed_total);
  if (total > out.malformed_total) out.malformed_total = total;
  out.dropped = v.value("dropped", int64_t{0});
  return Status::Ok();
}

// One "metrics" array of parse_log's output (with series) back into MetricResults.
Status MetricsFromJson(const json& metrics, const std::string& where, std::vector<MetricResult>& into) {
  for (size_t i = 0; i < metrics.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const json& m = metrics[i];
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string())
      return InvalidArgument(at + ".name: expected string");
    if (!m.contains("steps") || !m["steps"].is_array() || !m.contains("values") || !m["values"].is_array())
      return InvalidArgument(at + ": needs \"steps\" and \"values\" arrays; run parse_log with series=true");
    const json& steps = m["steps"];
    const json& values = m["values"];
    if (steps.size() != values.size())
      return InvalidArgument(at + ": \"steps\" has " + std::to_string(steps.size()) + " entries but \"values\" " +
                             std::to_string(values.size()));
    MetricResult out;
    out.name = m["name"].get<std::string>();
    out.source = m.value("source", std::string("log"));
    const bool exact = m.value("full_precision", false);
    Decimals uniform = kExact;
    if (!exact) {
      if (m.contains("printed_decimals") && m["printed_decimals"].is_number_integer()) {
        uniform = static_cast<Decimals>(m["printed_decimals"].get<int>());
      } else if (!m.contains("decimals")) {
        return InvalidArgument(at + ": full_precision is false but printed_decimals is missing");
      }
    }
    const json* decimals = m.contains("decimals") && m["decimals"].is_array() ? &m["decimals"] : nullptr;
    if (decimals && decimals->size() != steps.size())
      return InvalidArgument(at + ".decimals: must have one entry per step");
    for (size_t k = 0; k < steps.size(); ++k) {
      if (!steps[k].is_number_integer())
        return InvalidArgument(at + ".steps[" + std::to_string(k) + "]: expected integer, got " + steps[k].dump());
      PARITY_ASSIGN_OR_RETURN(double value, ValueFromJson(values[k], at + ".values[" + std::to_string(k) + "]"));
      Decimals d = uniform;
      if (decimals) d = (*decimals)[k].is_number_integer() ? static_cast<Decimals>((*decimals)[k].get<int>()) : kExact;
      if (!std::isfinite(value)) d = kExact;
      out.series.Add(steps[k].get<int64_t>(), value, d);
    }
    out.issues = Finalize(out.series);
    out.precision = SummarisePrecision(out.series);
    out.non_finite = CountNonFinite(out.series);
    out.placeholder = m.value("placeholder", false);
    out.not_available = m.value("not_available", int64_t{0});
    into.push_back(std::move(out));
  }
  return Status::Ok();
}

}  // namespace

json SourcesToJson(const std::vector<LogSource>& sources) {
  json out = json::array();
  for (const auto& s : sources) {
    out.push_back({{"path", ToValidUtf8(s.path)},
                   {"sha256", s.sha256.empty() ? json(nullptr) : json(s.sha256)},
                   {"bytes", s.bytes},
                   {"ranks", s.ranks}});
  }
  return out;
}

json ValueToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json ParseResultToJson(const ParseResult& r, bool include_series, size_t inline_points) {
  json metrics = json::array();
  for (const auto& m : r.metrics) metrics.push_back(MetricToJson(m, include_series, inline_points));
  json other_ranks = json::array();
  for (const auto& rank : r.other_ranks) {
    json rank_metrics = json::array();
    for (const auto& m : rank.metrics) rank_metrics.push_back(MetricToJson(m, include_series, inline_points));
    other_ranks.push_back({{"rank", rank.rank}, {"metrics", std::move(rank_metrics)}});
  }
  json errors = json::array();
  for (const auto& e : r.errors) {
    json je = {{"line", e.line}, {"kind", e.kind}, {"text", e.text}};
    if (e.rank) je["rank"] = *e.rank;
    errors.push_back(std::move(je));
  }
  json warnings = json::array();
  for (const auto& w : r.warnings) {
    json jw = {{"code", w.code}, {"message", w.message}};
    if (w.line) jw["line"] = *w.line;
    warnings.push_back(std::move(jw));
  }
  const auto& c = r.steps;
  json missing = c.missing;
  json j = {
      {"path", ToValidUtf8(r.path)},
      {"format", FormatName(r.format)},
      {"format_detail", r.format_detail},
      {"bytes", r.bytes},
      {"lines", r.lines},
      {"rank", r.rank ? json(*r.rank) : json(nullptr)},
      {"ranks_seen", r.ranks_seen},
      {"metrics", std::move(metrics)},
      {"other_ranks", std::move(other_ranks)},
      {"available_metrics", r.available_metrics},
      {"steps",
       {{"seen", c.seen},
        {"first", OptionalInt(c.first)},
        {"last", OptionalInt(c.last)},
        {"interval", OptionalInt(c.interval)},
        {"expected_last", OptionalInt(c.expected_last)},
        {"expected_count", OptionalInt(c.expected_count)},
        {"missing_count", c.missing_count},
        {"missing", std::move(missing)},
        {"duplicates", c.duplicates},
        {"restarts", c.restarts}}},
      {"success_marker", r.text_log ? json(r.success_marker) : json(nullptr)},
      {"success_line", OptionalInt(r.success_line)},
      {"success_text", r.success_line ? json(r.success_text) : json(nullptr)},
      {"errors", std::move(errors)},
      {"errors_total", r.errors_total},
      {"error_counts", r.error_counts},
      {"warnings", std::move(warnings)},
  };
  if (!r.sha256.empty()) j["sha256"] = r.sha256;
  if (r.probes.any()) j["probes"] = ProbesToJson(r.probes, include_series);
  if (!r.sources.empty()) j["files"] = SourcesToJson(r.sources);
  return j;
}

Result<ParseResult> ParseResultFromJson(const json& v, const std::string& where) {
  if (!v.is_object()) return InvalidArgument(where + ": expected a parse_log result object or a path");
  ParseResult r;
  try {
    r.path = v.value("path", std::string());
    if (v.contains("format") && v["format"].is_string()) {
      if (auto f = FormatFromName(v["format"].get<std::string>()); f.ok()) r.format = *f;
    }
    r.text_log = r.format != LogFormat::kTensorBoard;
    r.sha256 = v.value("sha256", std::string());
    if (v.contains("success_marker") && v["success_marker"].is_boolean())
      r.success_marker = v["success_marker"].get<bool>();
    if (v.contains("success_text") && v["success_text"].is_string()) r.success_text = v["success_text"].get<std::string>();
    if (v.contains("errors_total") && v["errors_total"].is_number_integer())
      r.errors_total = v["errors_total"].get<int64_t>();
    if (!v.contains("metrics") || !v["metrics"].is_array())
      return InvalidArgument(where + ".metrics: expected an array of metrics (parse_log's output)");
    if (v.contains("rank") && v["rank"].is_number_integer()) r.rank = v["rank"].get<int>();
    if (v.contains("series_file") && v["series_file"].is_string()) {
      // A bounded parse_log result: the series are in the file it wrote.
      PARITY_RETURN_IF_ERROR(ReadSeriesFile(v["series_file"].get<std::string>(), r));
      auto flags = [](const json& metrics, std::vector<MetricResult>& into) {
        for (const json& m : metrics) {
          for (auto& out : into) {
            if (m.is_object() && m.value("name", std::string()) == out.name) out.placeholder = m.value("placeholder", false);
          }
        }
      };
      flags(v["metrics"], r.metrics);
      if (v.contains("other_ranks") && v["other_ranks"].is_array()) {
        for (const json& rank : v["other_ranks"]) {
          for (auto& out : r.other_ranks) {
            if (rank.is_object() && rank.value("rank", -2) == out.rank && rank.contains("metrics"))
              flags(rank["metrics"], out.metrics);
          }
        }
      }
      if (v.contains("probes")) PARITY_RETURN_IF_ERROR(ProbesFromJson(v["probes"], where + ".probes", r.probes));
      return r;
    }
    PARITY_RETURN_IF_ERROR(MetricsFromJson(v["metrics"], where + ".metrics", r.metrics));
    if (v.contains("other_ranks") && v["other_ranks"].is_array()) {
      const json& ranks = v["other_ranks"];
      for (size_t i = 0; i < ranks.size(); ++i) {
        const std::string at = where + ".other_ranks[" + std::to_string(i) + "]";
        if (!ranks[i].is_object() || !ranks[i].contains("rank") || !ranks[i]["rank"].is_number_integer() ||
            !ranks[i].contains("metrics") || !ranks[i]["metrics"].is_array())
          return InvalidArgument(at + ": expected {\"rank\": integer, \"metrics\": [...]}");
        RankMetrics rank;
        rank.rank = ranks[i]["rank"].get<int>();
        PARITY_RETURN_IF_ERROR(MetricsFromJson(ranks[i]["metrics"], at + ".metrics", rank.metrics));
        r.other_ranks.push_back(std::move(rank));
      }
    }
    if (v.contains("probes")) PARITY_RETURN_IF_ERROR(ProbesFromJson(v["probes"], where + ".probes", r.probes));
  } catch (const json::exception& e) {
    return InvalidArgument(where + ": " + e.what());
  }
  return r;
}

}  // namespace parity::logs
