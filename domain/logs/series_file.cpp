#include "domain/logs/series_file.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <string_view>

#include "domain/logs/number_text.h"
#include "support/utf8.h"
#include "support/safe_file.h"

namespace parity::logs {
namespace {

constexpr std::string_view kHeader = "rank,metric,step,value,decimals\n";

// A metric name as one CSV field: quoted when it holds a comma or a quote.
std::string Field(const std::string& name) {
  const std::string valid = ToValidUtf8(name);
  if (valid.find_first_of(",\"\n") == std::string::npos) return valid;
  std::string out = "\"";
  for (char c : valid) {
    if (c == '"') out += '"';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

void AppendMetric(std::string& out, std::optional<int> rank, const MetricResult& m) {
  const std::string name = Field(m.name);
  const std::string rank_text = rank ? std::to_string(*rank) : std::string();
  char buf[32];
  for (size_t i = 0; i < m.series.size(); ++i) {
    out += rank_text;
    out += ',';
    out += name;
    out += ',';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, m.series.keys[i]).ptr);
    out += ',';
    AppendNumber(out, m.series.values[i]);
    out += ',';
    if (m.series.decimals[i] != kExact) out += std::to_string(m.series.decimals[i]);
    out += '\n';
  }
}

// Splits one CSV row into its fields (quoted fields as written by Field).
std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace

Result<int64_t> WriteSeriesFile(const std::filesystem::path& path, const ParseResult& result) {
  std::string out(kHeader);
  int64_t rows = 0;
  for (const auto& m : result.metrics) {
    AppendMetric(out, result.rank, m);
    rows += static_cast<int64_t>(m.series.size());
  }
  for (const auto& r : result.other_ranks) {
    for (const auto& m : r.metrics) {
      AppendMetric(out, r.rank, m);
      rows += static_cast<int64_t>(m.series.size());
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return Unavailable("cannot create " + path.parent_path().string() + ": " + ec.message());
  PARITY_RETURN_IF_ERROR(WriteFileAtomic(path, out));
  return rows;
}

Status ReadSeriesFile(const std::filesystem::path& path, ParseResult& result) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("series file not found: " + path.string());
  std::string line;
  std::getline(in, line);
  if (line + "\n" != kHeader) return InvalidArgument(path.string() + " is not a parse_log series file");
  std::map<std::pair<int, std::string>, KeyedSeries> series;
  int64_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    const auto f = Split(line);
    if (f.size() != 5) return InvalidArgument(path.string() + ":" + std::to_string(number) + ": expected 5 fields");
    int rank = -1;
    int64_t step = 0;
    double value = 0;
    if (!f[0].empty()) std::from_chars(f[0].data(), f[0].data() + f[0].size(), rank);
    auto [p, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), step);
    if (ec != std::errc()) return InvalidArgument(path.string() + ":" + std::to_string(number) + ": bad step");
    if (f[3] == "nan") {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (f[3] == "inf" || f[3] == "-inf") {
      value = f[3][0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    } else if (std::from_chars(f[3].data(), f[3].data() + f[3].size(), value).ec != std::errc()) {
      return InvalidArgument(path.string() + ":" + std::to_string(number) + ": bad value");
    }
    int decimals = kExact;
    if (!f[4].empty()) std::from_chars(f[4].data(), f[4].data() + f[4].size(), decimals);
    series[{rank, f[1]}].Add(step, value, static_cast<Decimals>(decimals));
  }
  const int own = result.rank.value_or(-1);
  for (auto& [key, s] : series) {
    std::vector<MetricResult>* metrics = nullptr;
    if (key.first == own) {
      metrics = &result.metrics;
    } else {
      for (auto& r : result.other_ranks) {
        if (r.rank == key.first) metrics = &r.metrics;
      }
      if (!metrics) {
        result.other_ranks.push_back({key.first, {}});
        metrics = &result.other_ranks.back().metrics;
      }
    }
    MetricResult* m = nullptr;
    for (auto& existing : *metrics) {
      if (existing.name == key.second) m = &existing;
    }
    if (!m) {
      metrics->push_back(MetricResult{});
      m = &metrics->back();
      m->name = key.second;
      m->source = "log";
    }
    m->series = std::move(s);
    m->issues = Finalize(m->series);
    m->precision = SummarisePrecision(m->series);
    m->non_finite = CountNonFinite(m->series);
  }
  return Status::Ok();
}

Result<std::string> ReadSeriesPage(const std::filesystem::path& path, int64_t page) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("series file not found: " + path.string());
  std::string line, out;
  std::getline(in, line);
  out = line + "\n";
  const int64_t from = page * static_cast<int64_t>(kSeriesRowsPerPage);
  for (int64_t row = 0; std::getline(in, line); ++row) {
    if (row < from) continue;
    if (row >= from + static_cast<int64_t>(kSeriesRowsPerPage)) break;
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace parity::logs
