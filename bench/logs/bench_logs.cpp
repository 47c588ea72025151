// The parse_log / compare_logs benchmark driver (run by bench/logs/run.sh):
//   bench_logs parse FILE [rank]    parse loss and grad_norm once, print bytes, seconds, MB/s
//   bench_logs regex FILE REGEX     the same with the user's regex instead of the format readers
//   bench_logs compare STEPS DIR    compare two STEPS-long series of loss and grad_norm,
//                                   then write report.json + diff_summary.csv under DIR
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "domain/logs/compare_report.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/presets.h"

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

int Parse(const char* path, const char* rank, const char* regex = nullptr) {
  parity::logs::ParseOptions o;
  if (rank) o.rank = std::atoi(rank);
  if (regex) {
    o.regex = regex;
    o.metrics.clear();
  }
  const auto t0 = Clock::now();
  auto r = parity::logs::ParseLog(path, o);
  const auto t1 = Clock::now();
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  const double s = Seconds(t0, t1);
  const auto* loss = regex ? (r->metrics.empty() ? nullptr : &r->metrics.front()) : r->Find("loss");
  std::printf("{\"bytes\": %llu, \"lines\": %lld, \"seconds\": %.4f, \"mb_per_s\": %.1f, \"format\": \"%s\", "
              "\"loss_points\": %zu, \"errors\": %lld, \"warnings\": %zu}\n",
              static_cast<unsigned long long>(r->bytes), static_cast<long long>(r->lines), s,
              r->bytes / 1e6 / s, parity::logs::FormatName(r->format), loss ? loss->series.size() : 0,
              static_cast<long long>(r->errors_total), r->warnings.size());
  return 0;
}

parity::logs::MetricResult Synthetic(const std::string& name, long steps, double shift, int decimals) {
  parity::logs::MetricResult m;
  m.name = name;
  m.source = "log";
  const double scale = std::pow(10.0, decimals);
  for (long s = 1; s <= steps; ++s) {
    double v = 10.0 * std::exp(-s / 200000.0) + 1.0 + std::sin(s * 0.001) * 0.01;
    if (s % 1000 == 0) v += shift;
    m.series.Add(s, std::round(v * scale) / scale, static_cast<parity::logs::Decimals>(decimals));
  }
  return m;
}

int Compare(long steps, const char* dir) {
  parity::logs::ParseResult b, c;
  b.path = "baseline";
  c.path = "candidate";
  b.metrics = {Synthetic("loss", steps, 0, 5), Synthetic("grad_norm", steps, 0, 4)};
  c.metrics = {Synthetic("loss", steps, 2e-5, 5), Synthetic("grad_norm", steps, 0, 4)};
  auto criteria = parity::logs::BuildCriteria({});
  const auto t0 = Clock::now();
  auto cmp = parity::logs::CompareRuns(b, c, *criteria, std::nullopt, false);
  const auto t1 = Clock::now();
  if (!cmp.ok()) {
    std::fprintf(stderr, "%s\n", cmp.status().ToString().c_str());
    return 1;
  }
  auto report = parity::logs::CompareReportJson("bench", b, c, *cmp);
  auto written = parity::logs::WriteCompareReport(dir, report, *cmp);
  const auto t2 = Clock::now();
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.ToString().c_str());
    return 1;
  }
  std::printf("{\"steps\": %ld, \"metrics\": 2, \"compare_seconds\": %.4f, \"compare_and_write_seconds\": %.4f, "
              "\"verdict\": \"%s\"}\n",
              steps, Seconds(t0, t1), Seconds(t0, t2), parity::logs::VerdictName(cmp->verdict));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "parse") == 0) return Parse(argv[2], argc > 3 ? argv[3] : nullptr);
  if (argc >= 4 && std::strcmp(argv[1], "regex") == 0) return Parse(argv[2], nullptr, argv[3]);
  if (argc >= 4 && std::strcmp(argv[1], "compare") == 0) return Compare(std::atol(argv[2]), argv[3]);
  std::fprintf(stderr, "usage: bench_logs parse FILE [rank] | bench_logs regex FILE REGEX | bench_logs compare STEPS DIR\n");
  return 2;
}
