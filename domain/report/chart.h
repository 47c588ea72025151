// Line charts drawn once, onto any Canvas: the same layout (axes, ticks, legend, series,
// tolerance line) becomes inline SVG for HTML, vectors in the PDF and pixels in a PNG.
// Coordinates are in points with the origin at the top left, y growing downwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parity::report {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

enum class Dash { kSolid, kDashed, kDotted };

struct Stroke {
  Rgb color;
  double width = 1.0;
  Dash dash = Dash::kSolid;
};

enum class Anchor { kStart, kMiddle, kEnd };

struct Point {
  double x = 0, y = 0;
};

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void Polyline(const std::vector<Point>& points, const Stroke& stroke) = 0;
  virtual void FillRect(double x, double y, double w, double h, Rgb color) = 0;
  // `y` is the text baseline. Text is UTF-8 (Chinese labels in a zh report).
  virtual void Text(double x, double y, const std::string& text, double size, Anchor anchor,
                    Rgb color) = 0;
  // Text rotated 90 degrees counter-clockwise, centred on (x, y); for the y-axis title.
  virtual void VerticalText(double x, double y, const std::string& text, double size, Rgb color) = 0;
  virtual double TextWidth(const std::string& text, double size) = 0;
};

struct ChartSeries {
  std::string label;
  std::vector<double> x, y;  // same length; non-finite y values leave a gap
  Stroke stroke;
  bool markers = false;      // a square on every point (sparse data, e.g. non-zero differences)
};

// A step x layer heatmap (msprobe_first_diff's hunt.json "heatmap"): rows are layers in
// execution order, columns (step, rank) pairs, a cell the layer output's relative difference
// in [0, 1] (nullopt: no such layer there), drawn on a log colour scale with equal cells in
// grey; the first divergent cell is framed.
struct HeatmapSpec {
  std::vector<std::string> rows, columns;
  std::vector<std::vector<std::optional<double>>> values;  // [row][column]
  std::optional<std::pair<size_t, size_t>> marked;          // (row, column)
  std::string marked_label;                                 // legend text for the frame
  std::string equal_label = "equal";
  std::string missing_label = "absent";
};

struct ChartSpec {
  std::string title;
  std::optional<HeatmapSpec> heatmap;  // set: a heatmap instead of line series
  std::string x_label = "step";
  std::string y_label;
  bool log_y = false;
  std::string log_suffix = " (log scale)";  // appended to y_label on a log axis
  std::vector<ChartSeries> series;
  struct HLine {
    double y;
    std::string label;
    Stroke stroke;
  };
  std::optional<HLine> hline;  // the tolerance
  std::string note;            // shown under the title, e.g. why some points are absent
};

// The palette: baseline and candidate differ in colour and in dash style, so the chart
// still reads in greyscale print and for colour-blind readers.
Stroke BaselineStroke();
Stroke CandidateStroke();
Stroke SecondaryStroke();  // a third series (grad_norm on the difference chart)
Stroke ToleranceStroke();

// Draws `spec` filling a width x height box at the canvas origin.
void DrawChart(const ChartSpec& spec, double width, double height, Canvas& canvas);
void DrawHeatmap(const ChartSpec& spec, double width, double height, Canvas& canvas);  // spec.heatmap set

// The heatmap's colour for a relative difference: grey for 0, then light yellow (1e-12 and
// below) through orange to dark red (1) on a log scale. Exposed for tests.
Rgb HeatColor(double value);

// Axis ticks: "nice" linear steps, or powers of ten on a log axis. Exposed for tests.
std::vector<double> LinearTicks(double lo, double hi, int target_count);
std::vector<double> LogTicks(double lo, double hi);
std::string FormatTick(double value);

}  // namespace parity::report
