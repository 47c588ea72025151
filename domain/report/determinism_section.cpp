#include "domain/report/determinism_section.h"

#include <cstdio>

namespace parity::report {

namespace {

std::string Text(const json& v) {
  if (v.is_number()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>();
  return v.is_null() ? "-" : v.dump();
}

void Add(Document& doc, Block::Kind kind, int level, std::string text) {
  Block b;
  b.kind = kind;
  b.level = level;
  b.text = std::move(text);
  b.in_summary = true;
  doc.blocks.push_back(std::move(b));
}

}  // namespace

void AddDeterminismSection(const CaseData& c, Language language, Document& doc) {
  const bool zh = language == Language::kZh;
  auto L = [zh](const char* z, const char* e) { return std::string(zh ? z : e); };
  const json& noise = c.report.value("noise", json());
  if (!c.gate1.is_object() && !noise.is_object()) return;
  Add(doc, Block::Kind::kHeading, 3, L("确定性（门 1）", "Determinism (gate 1)"));
  if (c.gate1.is_object()) {
    const std::string v = c.gate1.value("verdict", "?");
    std::string text = v == "PASS"   ? L("已验证确定性：基线两次运行逐位一致。", "Determinism verified: the baseline ran twice, bit for bit identical.")
                       : v == "FAIL" ? L("基线两次运行不一致。", "The baseline does not repeat itself.")
                                     : L("无法判定基线是否逐位重复。", "Whether the baseline repeats bit for bit could not be decided.");
    Add(doc, Block::Kind::kParagraph, 1,
        text + " " + c.gate1.value("verdict_reason", std::string()) + " (" + c.name + ".gate1/report.json)");
  }
  if (noise.is_object()) {
    std::string text = L("按基线自身噪声判定（", "Judged against the baseline's own noise (") + Text(noise.value("runs", json())) +
                       L(" 次基线运行）：", " baseline runs): ") + noise.value("statistic", std::string());
    if (noise.value("first_divergent_step", json()).is_number()) {
      text += L(" 基线各次运行首次不同于 step ", " The baseline runs first differ at step ") + Text(noise["first_divergent_step"]) +
              " (" + Text(noise.value("first_divergent_metric", json())) + ").";
    }
    const json metrics = noise.value("metrics", json::object());  // a named copy: items() keeps a reference
    for (const auto& [metric, m] : metrics.items()) {
      text += " " + metric + L("：最大包络 ", ": largest envelope ") + Text(m.value("max_envelope", json())) +
              L("，最大运行间差 ", ", largest run-to-run range ") + Text(m.value("max_range", json())) + ".";
    }
    Add(doc, Block::Kind::kParagraph, 1, text);
  }
}

}  // namespace parity::report
