// The step x layer heatmap (chart.h DrawHeatmap): one layout for SVG, PDF and PNG.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "domain/report/chart.h"

namespace parity::report {

namespace {

constexpr Rgb kInk{33, 33, 33};
constexpr Rgb kMuted{110, 110, 110};
constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kEqual{232, 232, 232};
constexpr Rgb kMissing{255, 255, 255};
constexpr double kLogLow = -12;  // 1e-12 and below: the lightest colour

Rgb Mix(Rgb a, Rgb b, double t) {
  auto m = [t](uint8_t x, uint8_t y) { return static_cast<uint8_t>(std::lround(x + (y - x) * t)); };
  return {m(a.r, b.r), m(a.g, b.g), m(a.b, b.b)};
}

// A label cut to fit `room` points, keeping its end (the layer's own name).
std::string Fit(const std::string& text, double size, double room, Canvas& canvas) {
  if (canvas.TextWidth(text, size) <= room) return text;
  for (size_t cut = 1; cut < text.size(); ++cut) {
    if ((static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) continue;  // inside a UTF-8 character
    std::string s = "..." + text.substr(cut);
    if (canvas.TextWidth(s, size) <= room) return s;
  }
  return "";
}

void Frame(double x, double y, double w, double h, const Stroke& stroke, Canvas& canvas) {
  canvas.Polyline({{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}, {x, y}}, stroke);
}

}  // namespace

Rgb HeatColor(double value) {
  if (!(value > 0)) return kEqual;
  static const Rgb kStops[] = {{255, 247, 188}, {254, 196, 79}, {236, 112, 20}, {153, 52, 4}, {80, 20, 0}};
  double t = std::clamp((std::log10(std::min(value, 1.0)) - kLogLow) / -kLogLow, 0.0, 1.0) * 4;
  size_t i = std::min<size_t>(3, static_cast<size_t>(t));
  return Mix(kStops[i], kStops[i + 1], t - static_cast<double>(i));
}

void DrawHeatmap(const ChartSpec& spec, double width, double height, Canvas& canvas) {
  const HeatmapSpec& h = *spec.heatmap;
  canvas.FillRect(0, 0, width, height, kWhite);
  canvas.Text(width / 2, 20, spec.title, 13, Anchor::kMiddle, kInk);
  if (!spec.note.empty()) canvas.Text(width / 2, 36, spec.note, 9, Anchor::kMiddle, kMuted);
  const double top = spec.note.empty() ? 58 : 70, bottom = 56, right = 14;
  const size_t nr = std::max<size_t>(1, h.rows.size()), nc = std::max<size_t>(1, h.columns.size());
  const double cell_h = (height - top - bottom) / static_cast<double>(nr);
  const double label_size = std::clamp(cell_h * 0.75, 4.0, 9.0);
  double label_w = 0;
  for (const std::string& r : h.rows) label_w = std::max(label_w, canvas.TextWidth(r, label_size));
  const double left = std::clamp(label_w + 10, 60.0, width * 0.42);
  const double cell_w = (width - left - right) / static_cast<double>(nc);
  // Row labels: every row when they fit, else every k-th.
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(4.0 / std::max(cell_h, 0.1))));
  for (size_t r = 0; r < h.rows.size(); ++r) {
    const double y = top + cell_h * static_cast<double>(r);
    for (size_t c = 0; c < h.columns.size(); ++c) {
      std::optional<double> v = r < h.values.size() && c < h.values[r].size() ? h.values[r][c] : std::nullopt;
      canvas.FillRect(left + cell_w * static_cast<double>(c), y, cell_w, cell_h, v ? HeatColor(*v) : kMissing);
    }
    if (r % every == 0) {
      canvas.Text(left - 5, y + cell_h / 2 + label_size * 0.35, Fit(h.rows[r], label_size, left - 8, canvas), label_size,
                  Anchor::kEnd, kInk);
    }
  }
  // Thin white lines between the cells when they are large enough to show them.
  if (cell_w > 6) {
    for (size_t c = 1; c < h.columns.size(); ++c) {
      double x = left + cell_w * static_cast<double>(c);
      canvas.Polyline({{x, top}, {x, top + cell_h * static_cast<double>(nr)}}, {kWhite, 1.0, Dash::kSolid});
    }
  }
  // Column labels above the grid.
  const double column_size = std::clamp(cell_w * 0.3, 5.0, 9.0);
  const size_t column_every =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(40.0 / std::max(cell_w, 0.1))));
  for (size_t c = 0; c < h.columns.size(); c += column_every) {
    canvas.Text(left + cell_w * (static_cast<double>(c) + 0.5), top - 5,
                Fit(h.columns[c], column_size, cell_w * static_cast<double>(column_every) - 2, canvas), column_size,
                Anchor::kMiddle, kInk);
  }
  Frame(left, top, cell_w * static_cast<double>(nc), cell_h * static_cast<double>(nr), {kMuted, 0.6, Dash::kSolid},
        canvas);
  if (h.marked) {
    const auto [r, c] = *h.marked;
    Frame(left + cell_w * static_cast<double>(c), top + cell_h * static_cast<double>(r), cell_w, cell_h,
          {{0, 0, 0}, std::clamp(std::min(cell_w, cell_h) / 6, 1.0, 2.5), Dash::kSolid}, canvas);
  }
  // The colour scale: equal, then 1e-12 .. 1.
  const double ly = height - bottom + 16, lh = 9;
  double x = left;
  canvas.FillRect(x, ly, 14, lh, kEqual);
  canvas.Text(x + 18, ly + lh - 1, h.equal_label, 8, Anchor::kStart, kInk);
  x += 24 + canvas.TextWidth(h.equal_label, 8);
  const double bar = std::min(220.0, width - x - 140);
  for (int i = 0; i < 60; ++i) {
    double e = kLogLow - kLogLow * (i + 0.5) / 60.0;
    canvas.FillRect(x + bar * i / 60.0, ly, bar / 60.0 + 0.3, lh, HeatColor(std::pow(10.0, e)));
  }
  for (int e : {-12, -8, -4, 0}) {
    char label[16];
    std::snprintf(label, sizeof label, e == 0 ? "1" : "1e%d", e);
    canvas.Text(x + bar * (e - kLogLow) / -kLogLow, ly + lh + 10, label, 7.5, Anchor::kMiddle, kMuted);
  }
  x += bar + 14;
  if (h.marked && !h.marked_label.empty()) {
    Frame(x, ly, 14, lh, {{0, 0, 0}, 1.6, Dash::kSolid}, canvas);
    canvas.Text(x + 18, ly + lh - 1, h.marked_label, 8, Anchor::kStart, kInk);
  }
}

}  // namespace parity::report
