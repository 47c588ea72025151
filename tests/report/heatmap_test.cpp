// The step x layer heatmap in the report: built from hunt.json's "heatmap" (the cells, the
// framed first divergent cell) and the dump tree's per-rank table, drawn as SVG and PNG
// with the cell colours the scale gives, and as vectors in the PDF like every chart.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/report/chart.h"
#include "domain/report/hunt_scan.h"
#include "domain/report/hunt_section.h"
#include "domain/report/raster.h"
#include "domain/report/svg.h"
#include "png_reader.h"

namespace parity::report {
namespace {

using json = nlohmann::json;

// The shape msprobe_first_diff writes for a dump tree (docs/CONTRACTS.md §4), cut down.
json TreeHunt() {
  return json::parse(R"json({
    "schema": "parity.hunt/1", "found": true, "mode": "summary", "criteria": {"mode": "msprobe"},
    "explanation": "step0, rank 1 diverges first (...)",
    "first_divergence": {"api": "Torch.add.2.forward", "verdict": "unmatched", "explanation": "x"},
    "heatmap": {"kind": "module", "rows": ["embed.Embedding", "layers.0.ffn.FFN", "head.Linear"],
                "columns": [{"step": 0, "rank": 0, "label": "step0/rank0"}, {"step": 0, "rank": 1, "label": "step0/rank1"}],
                "values": [[0.0, 0.0], [0.0, 1e-6], [null, 0.5]],
                "first_cell": {"row": 1, "column": 1}},
    "scan": {"pairs": 2, "explanation": "step0, rank 1 diverges first (2 (step, rank) pairs, 1 divergent)",
             "per_rank": [{"step": 0, "rank": 0, "found": false, "api": null, "verdict": null, "position": null,
                           "inserted": null, "divergent_apis": 0},
                          {"step": 0, "rank": 1, "found": true, "api": "Torch.add.2.forward", "verdict": "unmatched",
                           "position": 27, "inserted": true, "divergent_apis": 1}]}
  })json");
}

std::string Hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

TEST(Heatmap, ChartMirrorsTheHuntJson) {
  auto chart = HeatmapChart(TreeHunt(), false);
  ASSERT_TRUE(chart.has_value());
  ASSERT_TRUE(chart->heatmap.has_value());
  const HeatmapSpec& h = *chart->heatmap;
  EXPECT_EQ(h.rows, (std::vector<std::string>{"embed.Embedding", "layers.0.ffn.FFN", "head.Linear"}));
  EXPECT_EQ(h.columns, (std::vector<std::string>{"step0/rank0", "step0/rank1"}));
  ASSERT_EQ(h.values.size(), 3u);
  EXPECT_FALSE(h.values[2][0].has_value());  // no such layer in that pair
  EXPECT_EQ(h.values[2][1], 0.5);
  ASSERT_TRUE(h.marked.has_value());
  EXPECT_EQ(*h.marked, (std::pair<size_t, size_t>{1, 1}));
  EXPECT_NE(chart->note.find("framed: layers.0.ffn.FFN @ step0/rank1"), std::string::npos) << chart->note;
  // No rows: no chart.
  json empty = TreeHunt();
  empty["heatmap"]["rows"] = json::array();
  EXPECT_FALSE(HeatmapChart(empty, false).has_value());
  EXPECT_FALSE(HeatmapChart(json::object(), false).has_value());
}

TEST(Heatmap, ColourScaleIsGreyForEqualAndDarkensWithTheDifference) {
  EXPECT_EQ(Hex(HeatColor(0)), Hex(HeatColor(-1)));
  Rgb small = HeatColor(1e-12), mid = HeatColor(1e-6), big = HeatColor(1);
  auto lum = [](Rgb c) { return 0.3 * c.r + 0.59 * c.g + 0.11 * c.b; };
  EXPECT_GT(lum(small), lum(mid));
  EXPECT_GT(lum(mid), lum(big));
  EXPECT_NE(Hex(HeatColor(0)), Hex(small));
}

TEST(Heatmap, SvgAndPngDrawEveryCellInItsColour) {
  auto chart = HeatmapChart(TreeHunt(), false);
  ASSERT_TRUE(chart.has_value());
  std::string svg = ChartToSvg(*chart, 720, 340);
  for (double v : {0.0, 1e-6, 0.5}) EXPECT_NE(svg.find("fill=\"" + Hex(HeatColor(v)) + "\""), std::string::npos) << v;
  EXPECT_NE(svg.find("layers.0.ffn.FFN"), std::string::npos);
  EXPECT_NE(svg.find("step0/rank1"), std::string::npos);
  auto png = ChartToPng(*chart, 720, 340, 1);
  if (!png.ok()) GTEST_SKIP() << png.status().ToString();  // no chart font installed
  auto image = testing::DecodePng(*png);
  ASSERT_EQ(image.width, 720);
  const Rgb half = HeatColor(0.5), micro = HeatColor(1e-6);
  EXPECT_GT(image.CountColor(half.r, half.g, half.b, 6), 1000u);
  EXPECT_GT(image.CountColor(micro.r, micro.g, micro.b, 6), 1000u);
}

TEST(Heatmap, HuntSectionShowsTheMapAndThePerRankTable) {
  Document doc;
  AddHuntSection(TreeHunt(), Language::kEn, doc);
  const Block* chart = nullptr;
  const Block* table = nullptr;
  for (const Block& b : doc.blocks) {
    if (b.kind == Block::Kind::kChart && b.chart.heatmap) chart = &b;
    if (b.kind == Block::Kind::kTable && !b.header.empty() && b.header[0] == "step") table = &b;
  }
  ASSERT_NE(chart, nullptr);
  EXPECT_EQ(chart->chart_id, "hunt_heatmap");
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rows.size(), 2u);
  EXPECT_EQ(table->rows[0][2], "none");
  EXPECT_EQ(table->rows[1][2], "Torch.add.2.forward");
  EXPECT_EQ(table->rows[1][4], "inserted before 28");
  // The heatmap and scan keys are laid out, not dumped again under "Further evidence".
  for (const Block& b : doc.blocks) {
    for (const auto& [k, v] : b.pairs) EXPECT_EQ(k.find("heatmap"), std::string::npos) << k;
  }
}

}  // namespace
}  // namespace parity::report
