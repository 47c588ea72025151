#include "domain/report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace parity::report {

Stroke BaselineStroke() { return {{31, 119, 180}, 2.0, Dash::kSolid}; }     // blue, solid
Stroke CandidateStroke() { return {{214, 39, 40}, 1.6, Dash::kDashed}; }    // red, dashed
Stroke SecondaryStroke() { return {{44, 160, 44}, 1.6, Dash::kDotted}; }    // green, dotted
Stroke ToleranceStroke() { return {{90, 90, 90}, 1.2, Dash::kDashed}; }     // grey, dashed

namespace {

constexpr Rgb kInk{33, 33, 33};
constexpr Rgb kMuted{110, 110, 110};
constexpr Rgb kGrid{225, 225, 225};
constexpr Rgb kWhite{255, 255, 255};

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void Add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return !(lo <= hi); }
};

bool Plottable(double y, bool log_y) { return std::isfinite(y) && (!log_y || y > 0); }

double NiceStep(double raw) {
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * mag;
}

}  // namespace

std::vector<double> LinearTicks(double lo, double hi, int target_count) {
  std::vector<double> ticks;
  if (!(hi > lo) || target_count < 1) return {lo};
  double step = NiceStep((hi - lo) / target_count);
  double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    if (ticks.size() > 50) break;
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  std::vector<double> ticks;
  int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  int every = std::max(1, (b - a + 7) / 8);
  for (int e = a; e <= b; e += every) ticks.push_back(std::pow(10.0, e));
  return ticks;
}

std::string FormatTick(double v) {
  char buf[32];
  if (v != 0 && (std::abs(v) < 1e-3 || std::abs(v) >= 1e6)) {
    int e = static_cast<int>(std::floor(std::log10(std::abs(v)) + 1e-9));
    double m = v / std::pow(10.0, e);
    if (std::abs(m - std::round(m)) < 1e-9 && std::round(std::abs(m)) == 1) {
      std::snprintf(buf, sizeof buf, "%s1e%d", m < 0 ? "-" : "", e);
    } else {
      std::snprintf(buf, sizeof buf, "%.3ge%d", m, e);
    }
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

void DrawChart(const ChartSpec& spec, double width, double height, Canvas& canvas) {
  if (spec.heatmap) return DrawHeatmap(spec, width, height, canvas);
  const double left = 70, right = 18, top = spec.note.empty() ? 46 : 58, bottom = 46;
  const double x0 = left, x1 = width - right, y0 = top, y1 = height - bottom;
  canvas.FillRect(0, 0, width, height, kWhite);

  // Data ranges.
  Range xr, yr;
  for (const auto& s : spec.series) {
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!Plottable(s.y[i], spec.log_y)) continue;
      xr.Add(s.x[i]);
      yr.Add(s.y[i]);
    }
  }
  if (spec.hline && Plottable(spec.hline->y, spec.log_y)) yr.Add(spec.hline->y);
  // The x axis spans every step, drawn or not, so charts of one case line up.
  for (const auto& s : spec.series)
    for (double x : s.x)
      if (std::isfinite(x)) xr.Add(x);
  if (xr.empty()) xr = {0, 1};
  if (xr.hi == xr.lo) xr = {xr.lo - 1, xr.hi + 1};

  std::vector<double> yticks;
  double ylo, yhi;
  if (spec.log_y) {
    if (yr.empty()) yr = {1e-8, 1};
    // Half a decade of air at both ends, so points on a decade do not sit on the frame.
    ylo = std::pow(10.0, std::floor(std::log10(yr.lo) - 0.5));
    yhi = std::pow(10.0, std::ceil(std::log10(yr.hi) + 0.5));
    yticks = LogTicks(ylo, yhi);
  } else {
    if (yr.empty()) yr = {0, 1};
    if (yr.hi == yr.lo) {
      double pad = yr.lo == 0 ? 1 : std::abs(yr.lo) * 0.01;
      yr = {yr.lo - pad, yr.hi + pad};
    }
    double pad = (yr.hi - yr.lo) * 0.05;
    yticks = LinearTicks(yr.lo - pad, yr.hi + pad, 6);
    ylo = std::min(yr.lo - pad, yticks.front());
    yhi = std::max(yr.hi + pad, yticks.back());
  }
  auto px = [&](double x) { return x0 + (x - xr.lo) / (xr.hi - xr.lo) * (x1 - x0); };
  auto py = [&](double y) {
    double t = spec.log_y ? (std::log10(y) - std::log10(ylo)) / (std::log10(yhi) - std::log10(ylo))
                          : (y - ylo) / (yhi - ylo);
    return y1 - t * (y1 - y0);
  };

  // Grid, ticks and labels.
  const double tick_size = 10;
  for (double t : yticks) {
    if (t < ylo * (1 - 1e-12) - 1e-300 || t > yhi * (1 + 1e-12) + 1e-300) continue;
    double y = py(t);
    canvas.Polyline({{x0, y}, {x1, y}}, {kGrid, 0.8, Dash::kSolid});
    canvas.Polyline({{x0 - 4, y}, {x0, y}}, {kInk, 1, Dash::kSolid});
    canvas.Text(x0 - 7, y + tick_size * 0.35, FormatTick(t), tick_size, Anchor::kEnd, kInk);
  }
  std::vector<double> xticks = LinearTicks(xr.lo, xr.hi, std::max(2, static_cast<int>((x1 - x0) / 90)));
  for (double t : xticks) {
    double x = px(t);
    canvas.Polyline({{x, y0}, {x, y1}}, {kGrid, 0.8, Dash::kSolid});
    canvas.Polyline({{x, y1}, {x, y1 + 4}}, {kInk, 1, Dash::kSolid});
    canvas.Text(x, y1 + 16, FormatTick(t), tick_size, Anchor::kMiddle, kInk);
  }
  canvas.Polyline({{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}, {kInk, 1, Dash::kSolid});
  canvas.Text((x0 + x1) / 2, height - 10, spec.x_label, 11, Anchor::kMiddle, kInk);
  std::string ylabel = spec.y_label + (spec.log_y ? spec.log_suffix : "");
  canvas.VerticalText(16, (y0 + y1) / 2, ylabel, 11, kInk);

  // Tolerance line, then the series.
  if (spec.hline && Plottable(spec.hline->y, spec.log_y)) {
    double y = py(spec.hline->y);
    canvas.Polyline({{x0, y}, {x1, y}}, spec.hline->stroke);
    canvas.Text(x1 - 4, y - 4, spec.hline->label, 9.5, Anchor::kEnd, spec.hline->stroke.color);
  }
  for (const auto& s : spec.series) {
    std::vector<Point> run;
    auto flush = [&] {
      if (run.size() == 1) run.push_back({run[0].x + 1.5, run[0].y}), run[0].x -= 1.5;
      if (!run.empty()) canvas.Polyline(run, s.stroke);
      run.clear();
    };
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!Plottable(s.y[i], spec.log_y)) {
        flush();
        continue;
      }
      run.push_back({px(s.x[i]), py(s.y[i])});
      if (s.markers) canvas.FillRect(run.back().x - 2.5, run.back().y - 2.5, 5, 5, s.stroke.color);
    }
    flush();
  }

  // Title, note and legend above the plot.
  canvas.Text(x0, 20, spec.title, 13, Anchor::kStart, kInk);
  if (!spec.note.empty()) canvas.Text(x0, 36, spec.note, 9.5, Anchor::kStart, kMuted);
  double lx = x1;
  const double ly = top - 10;
  std::vector<std::pair<std::string, Stroke>> entries;
  for (const auto& s : spec.series) entries.emplace_back(s.label, s.stroke);
  if (spec.hline) entries.emplace_back(spec.hline->label, spec.hline->stroke);
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    double w = canvas.TextWidth(it->first, 10);
    lx -= w;
    canvas.Text(lx, ly + 3.5, it->first, 10, Anchor::kStart, kInk);
    lx -= 30;
    canvas.Polyline({{lx, ly}, {lx + 24, ly}}, it->second);
    lx -= 14;
  }
}

}  // namespace parity::report
