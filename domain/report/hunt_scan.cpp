#include "domain/report/hunt_scan.h"

#include <string>

#include "domain/report/hunt_words.h"

namespace parity::report {

using json = nlohmann::json;

namespace {

std::string Text(const json& v) { return ValueText(v); }

Block& Add(Document& doc, Block::Kind kind) {
  doc.blocks.emplace_back();
  doc.blocks.back().kind = kind;
  return doc.blocks.back();
}

}  // namespace

std::optional<ChartSpec> HeatmapChart(const json& hunt, bool zh) {
  const json& heat = hunt.value("heatmap", json());
  if (!heat.is_object() || !heat.value("rows", json()).is_array() || !heat.value("columns", json()).is_array() ||
      heat["rows"].empty() || heat["columns"].empty()) {
    return std::nullopt;
  }
  HeatmapSpec h;
  for (const json& r : heat["rows"]) h.rows.push_back(Text(r));
  for (const json& c : heat["columns"]) h.columns.push_back(c.is_object() ? Text(c.value("label", json())) : Text(c));
  const json& values = heat.value("values", json::array());
  for (size_t r = 0; r < h.rows.size(); ++r) {
    std::vector<std::optional<double>> row(h.columns.size());
    for (size_t c = 0; values.is_array() && r < values.size() && values[r].is_array() && c < values[r].size() &&
                       c < row.size();
         ++c) {
      if (values[r][c].is_number()) row[c] = values[r][c].get<double>();
    }
    h.values.push_back(std::move(row));
  }
  const json& cell = heat.value("first_cell", json());
  std::string where;
  if (cell.is_object() && cell.value("row", json()).is_number_unsigned() && cell.value("column", json()).is_number_unsigned()) {
    size_t r = cell["row"], c = cell["column"];
    if (r < h.rows.size() && c < h.columns.size()) {
      h.marked = {r, c};
      where = h.rows[r] + " @ " + h.columns[c];
    }
  }
  const bool modules = heat.value("kind", "") == "module";
  h.marked_label = zh ? "首个分歧 API 所在层" : "layer of the first divergent API";
  h.equal_label = zh ? "一致" : "equal";
  ChartSpec spec;
  spec.title = zh ? "逐 step × 层：各层输出的相对差异" : "Step x layer: relative difference of each layer's output";
  spec.note = std::string(zh ? (modules ? "行：模块（执行顺序）" : "行：调用 API 的用户代码行（执行顺序）")
                             : (modules ? "rows: modules in execution order" : "rows: user-code lines calling the APIs, in execution order")) +
              (zh ? "；列：step / rank" : "; columns: step / rank") +
              (where.empty() ? "" : (zh ? "；框出：" : "; framed: ") + where);
  spec.heatmap = std::move(h);
  return spec;
}

void AddHuntScan(const json& hunt, bool zh, Document& doc) {
  if (auto chart = HeatmapChart(hunt, zh)) {
    auto& h = Add(doc, Block::Kind::kHeading);
    h.level = 3;
    h.text = zh ? "差异图（step × 层）" : "Where and when the numbers part (step x layer)";
    auto& b = Add(doc, Block::Kind::kChart);
    b.chart = std::move(*chart);
    b.chart_id = "hunt_heatmap";
  }
  const json& scan = hunt.value("scan", json());
  if (!scan.is_object()) return;
  auto& h = Add(doc, Block::Kind::kHeading);
  h.level = 3;
  h.text = zh ? "每个 rank 与 step 的首个分歧" : "First divergence of every rank and step";
  if (scan.value("explanation", json()).is_string()) Add(doc, Block::Kind::kParagraph).text = scan["explanation"];
  const json& per_rank = scan.value("per_rank", json());
  if (!per_rank.is_array()) return;
  auto& t = Add(doc, Block::Kind::kTable);
  t.monospace = true;
  t.header = {"step", "rank", zh ? "首个分歧 API" : "first divergent API", zh ? "判定" : "verdict",
              zh ? "位置（基线调用序号）" : "position (baseline call)", zh ? "分歧 API 数" : "divergent APIs"};
  for (const json& r : per_rank) {
    if (!r.is_object()) continue;
    std::string position = "-";
    if (r.value("position", json()).is_number()) {
      position = std::to_string(r["position"].get<long long>() + 1);
      if (r.value("inserted", false)) position = (zh ? "插入于 " : "inserted before ") + position;
    }
    t.rows.push_back({Text(r.value("step", json())), Text(r.value("rank", json())),
                      r.value("found", false) ? Text(r.value("api", json())) : (zh ? "无" : "none"),
                      Text(r.value("verdict", json())), position, Text(r.value("divergent_apis", json()))});
  }
}

}  // namespace parity::report
