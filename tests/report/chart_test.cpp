#include <cmath>

#include <gtest/gtest.h>

#include "domain/report/chart.h"
#include "domain/report/raster.h"
#include "domain/report/svg.h"
#include "png_reader.h"

namespace parity::report {
namespace {

ChartSpec Overlay() {
  ChartSpec spec;
  spec.title = "toy: loss (baseline vs candidate)";
  spec.y_label = "loss";
  std::vector<double> x, b, c;
  for (int i = 1; i <= 50; ++i) {
    x.push_back(i);
    b.push_back(5.5 - std::log(i) * 0.5);
    c.push_back(5.5 - std::log(i) * 0.5 + (i > 25 ? 0.05 : 0));
  }
  spec.series.push_back({"baseline", x, b, BaselineStroke()});
  spec.series.push_back({"candidate", x, c, CandidateStroke()});
  return spec;
}

TEST(Chart, LinearTicksAreRoundAndCoverTheRange) {
  auto t = LinearTicks(0.13, 9.7, 5);
  ASSERT_GE(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t.front(), 2);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 2);
  EXPECT_LE(t.back(), 9.7);
  auto fine = LinearTicks(5.00001, 5.00009, 4);
  ASSERT_GE(fine.size(), 3u);
  EXPECT_GT(fine.front(), 5.00001 - 1e-12);
}

TEST(Chart, LogTicksArePowersOfTen) {
  auto t = LogTicks(1e-9, 1e-3);
  ASSERT_EQ(t.size(), 7u);
  EXPECT_DOUBLE_EQ(t.front(), 1e-9);
  EXPECT_EQ(FormatTick(1e-7), "1e-7");
  EXPECT_EQ(FormatTick(2.5), "2.5");
  auto wide = LogTicks(1e-30, 1);
  EXPECT_LE(wide.size(), 9u);  // thinned, still labelled
}

TEST(Chart, SvgHasBothSeriesWithDifferentDashesAndNoExternalReference) {
  std::string svg = ChartToSvg(Overlay(), 720, 340);
  EXPECT_NE(svg.find("#1f77b4"), std::string::npos);  // baseline blue
  EXPECT_NE(svg.find("#d62728"), std::string::npos);  // candidate red
  EXPECT_NE(svg.find("stroke-dasharray=\"7 4\""), std::string::npos);
  EXPECT_NE(svg.find(">baseline</text>"), std::string::npos);
  EXPECT_NE(svg.find(">candidate</text>"), std::string::npos);
  EXPECT_EQ(svg.find("http"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 720.00 340.00\""), std::string::npos);
}

TEST(Chart, PngIsAntiAliasedAndShowsBothColours) {
  auto png = ChartToPng(Overlay(), 720, 340, 2);
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  auto img = testing::DecodePng(*png);
  ASSERT_EQ(img.width, 1440);
  ASSERT_EQ(img.height, 680);
  EXPECT_GT(img.InkFraction(), 0.01);
  EXPECT_LT(img.InkFraction(), 0.5);
  EXPECT_GT(img.CountColor(31, 119, 180, 10), 500u);  // solid baseline
  EXPECT_GT(img.CountColor(214, 39, 40, 10), 200u);   // dashed candidate
  // Anti-aliasing: partial-coverage blues exist between the line colour and white.
  size_t intermediate = 0;
  for (size_t i = 0; i + 2 < img.rgb.size(); i += 3) {
    int r = img.rgb[i], g = img.rgb[i + 1], b = img.rgb[i + 2];
    intermediate += r > 60 && r < 220 && b > r + 20 && g > r && g < b;
  }
  EXPECT_GT(intermediate, 100u);
}

TEST(Chart, LogChartDrawsToleranceAndSkipsZeros) {
  ChartSpec spec;
  spec.title = "diff";
  spec.log_y = true;
  spec.series.push_back({"loss", {1, 2, 3, 4}, {0, 1e-7, 0, 3e-6}, BaselineStroke()});
  spec.hline = ChartSpec::HLine{1e-5, "tolerance 1e-05", ToleranceStroke()};
  std::string svg = ChartToSvg(spec, 720, 340);
  EXPECT_NE(svg.find("tolerance 1e-05"), std::string::npos);
  EXPECT_NE(svg.find(">1e-5</text>"), std::string::npos);
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);
  auto png = ChartToPng(spec, 720, 340, 1);
  ASSERT_TRUE(png.ok());
  EXPECT_GT(testing::DecodePng(*png).CountColor(90, 90, 90, 8), 50u);  // the grey tolerance line
}

// The title band of a chart drawn with `title` (the top 30 points at scale 2).
std::vector<uint8_t> TitleBand(const std::string& title) {
  ChartSpec spec = Overlay();
  spec.title = title;
  auto png = ChartToPng(spec, 720, 340, 2);
  EXPECT_TRUE(png.ok()) << png.status().ToString();
  if (!png.ok()) return {};
  auto img = testing::DecodePng(*png);
  return std::vector<uint8_t>(img.rgb.begin(), img.rgb.begin() + static_cast<size_t>(img.width) * 60 * 3);
}

TEST(Chart, PngDrawsChineseGlyphsNotMissingGlyphBoxes) {
  // Two different characters give two different bitmaps only when both have real glyphs
  // (a font without them draws the same empty box for each).
  auto blank = TitleBand("");
  auto zhong = TitleBand("中中中中 基线");
  auto guo = TitleBand("国国国国 基线");
  ASSERT_FALSE(blank.empty());
  EXPECT_NE(zhong, blank) << "nothing drawn for the Chinese title";
  EXPECT_NE(zhong, guo) << "different Chinese characters drew the same pixels (missing-glyph boxes)";
  // Latin and Chinese in one run keep their own widths: the Latin tail still lands.
  EXPECT_NE(TitleBand("中 loss"), TitleBand("中 lass"));
}

TEST(Chart, SvgCarriesChineseLabelsAsText) {
  ChartSpec spec = Overlay();
  spec.series[0].label = "基线 baseline";
  spec.x_label = "训练步 step";
  spec.log_y = true;
  spec.log_suffix = "（对数坐标）";
  std::string svg = ChartToSvg(spec, 720, 340);
  for (const char* s : {">基线 baseline</text>", ">训练步 step</text>", "loss（对数坐标）</text>", "Noto Sans CJK SC"}) {
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace parity::report
