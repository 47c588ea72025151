#include "domain/report/document.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>

#include "domain/report/determinism_section.h"
#include "domain/report/hunt_section.h"
#include "support/subprocess.h"
#include "support/version.h"

namespace parity::report {

namespace fs = std::filesystem;

namespace {

// Upper bound on appendix rows; the CSV always has all of them.
constexpr size_t kAppendixRows = 2000;
constexpr size_t kOffendingRows = 20;

class Builder {
 public:
  Builder(const ReportModel& model, Document& doc) : model_(model), doc_(doc) {}

  const char* L(const char* zh, const char* en) const { return model_.language == Language::kZh ? zh : en; }
  std::string VerdictWord(const std::string& v) const {
    if (model_.language == Language::kEn) return v;
    if (v == "PASS") return "PASS（通过）";
    if (v == "FAIL") return "FAIL（未通过）";
    return "INCONCLUSIVE（无法判定）";
  }

  Block& Add(Block::Kind kind) {
    doc_.blocks.emplace_back();
    doc_.blocks.back().kind = kind;
    return doc_.blocks.back();
  }
  void Heading(int level, std::string text) {
    auto& b = Add(Block::Kind::kHeading);
    b.level = level;
    b.text = std::move(text);
  }
  void Paragraph(std::string text) { Add(Block::Kind::kParagraph).text = std::move(text); }
  Block& KeyValues(bool monospace = false) {
    auto& b = Add(Block::Kind::kKeyValues);
    b.monospace = monospace;
    return b;
  }
  Block& Table(std::vector<std::string> header, bool monospace = false) {
    auto& b = Add(Block::Kind::kTable);
    b.header = std::move(header);
    b.monospace = monospace;
    return b;
  }

  const ReportModel& model_;
  Document& doc_;
};

// The shortest decimal that reads back as the same double: what the log printed, without
// the %.17g noise (5.32312, not 5.3231200000000003), and never less than the truth.
std::string Exact(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// A difference: 0 when exactly zero (bitwise equal), else three significant digits.
std::string Diff(double v) {
  if (v == 0) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Fmt(const json& v, const char* format = "%.6g") {
  if (v.is_number()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v.get<double>());
    return buf;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "-";
  return v.dump();
}

std::string Fmt(double v, const char* format = "%.6g") {
  if (std::isnan(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string SafeId(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

// The object at `key`, or an empty one when it is missing, null or not an object.
json ObjectAt(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : json::object();
}

std::string NanInf(const json& stats, const char* side) {
  const json n = ObjectAt(ObjectAt(stats, "nan_inf"), side);
  return Fmt(n.value("nan", json())) + " / " + Fmt(n.value("inf", json()));
}

// Marks the blocks added since `first` as part of the PR summary.
void MarkSummary(Document& doc, size_t first) {
  for (size_t i = first; i < doc.blocks.size(); ++i) doc.blocks[i].in_summary = true;
}

void AddSummary(Builder& b) {
  const size_t first = b.doc_.blocks.size();
  b.Heading(2, b.L("结论", "Verdict"));
  auto& v = b.Add(Block::Kind::kVerdict);
  v.verdict = OverallVerdict(b.model_);
  size_t pass = 0;
  for (const auto& c : b.model_.cases) pass += c.report["verdict"] == "PASS";
  v.text = std::to_string(pass) + "/" + std::to_string(b.model_.cases.size()) +
           b.L(" 个用例通过。判定标准：每个指标逐 step 差异不超过容差，且两侧 NaN/Inf 数量相同。",
               " cases passed. A case passes when every metric stays within its tolerance at every step and "
               "both sides have the same NaN/Inf counts.");
  auto& t = b.Table({b.L("用例", "Case"), b.L("结论", "Verdict"), b.L("说明", "Reason"),
                     b.L("首个超标 step", "First step beyond tolerance")});
  for (const auto& c : b.model_.cases) {
    json first;
    for (const auto& m : c.metrics) {
      const json& f = m.stats.value("first_exceeding_step", json());
      if (f.is_number() && (first.is_null() || f.get<double>() < first.get<double>())) first = f;
    }
    t.rows.push_back({c.name, b.VerdictWord(c.report["verdict"]), c.report["verdict_reason"], Fmt(first)});
  }
  MarkSummary(b.doc_, first);
}

// Model, config and determinism options as they appear in the commands parity ran.
void AddSetup(Builder& b, const json& reproduce) {
  b.Heading(2, b.L("环境信息", "Environment"));
  if (reproduce.is_null() || reproduce["environment"].empty()) {
    b.Paragraph(b.L("账本中没有 probe_env 记录的环境信息（请先运行 probe_env）。",
                    "The ledger holds no environment recorded by probe_env (run probe_env first)."));
  } else {
    // One row per item, one column per place probed, so a difference between the sides
    // stands out (the last column says whether they agree).
    const json& env = reproduce["environment"];
    std::vector<std::string> sides, keys;
    for (const char* side : {"baseline", "candidate", "shared"})
      if (env.contains(side)) sides.push_back(side);
    for (const auto& [side, summary] : env.items())
      if (std::find(sides.begin(), sides.end(), side) == sides.end()) sides.push_back(side);
    for (const auto& side : sides) {
      const json& summary = env[side];
      if (!summary.is_object()) continue;
      for (const auto& [k, v] : summary.items())
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    std::vector<std::string> header = {b.L("项目", "item")};
    for (const auto& side : sides) {
      header.push_back(side == "baseline"    ? b.L("基线 baseline", "baseline")
                       : side == "candidate" ? b.L("候选 candidate", "candidate")
                       : side == "shared"    ? b.L("共用 shared", "shared")
                                             : side.c_str());
    }
    header.push_back(b.L("一致", "same"));
    auto& t = b.Table(header, /*monospace=*/true);
    for (const auto& k : keys) {
      std::vector<std::string> row = {k};
      std::set<std::string> distinct;
      for (const auto& side : sides) {
        const json& summary = env[side];
        std::string cell = summary.is_object() && summary.contains(k) ? Fmt(summary[k]) : "-";
        distinct.insert(cell);
        row.push_back(cell);
      }
      row.push_back(distinct.size() == 1 ? b.L("是", "yes") : b.L("否", "NO"));
      t.rows.push_back(std::move(row));
    }
  }

  b.Heading(2, b.L("提交与配置", "Commits and configuration"));
  b.doc_.blocks.back().in_summary = true;
  auto& kv = b.KeyValues(/*monospace=*/true);
  kv.in_summary = true;
  if (!reproduce.is_null()) {
    kv.pairs.push_back({b.L("仓库", "Repository"), reproduce["repo"]["clone_url"]});
    for (const char* side : {"baseline", "candidate"}) {
      const json& s = reproduce[side];
      std::string label = std::string(side == std::string("baseline") ? b.L("分支 A（基线）", "Branch A (baseline)")
                                                                        : b.L("分支 B（候选）", "Branch B (candidate)"));
      kv.pairs.push_back({label, (s["ref"].is_string() ? s["ref"].get<std::string>() + " @ " : "") +
                                     s["commit"].get<std::string>()});
    }
    std::vector<std::string> models, determinism;
    static const std::regex kDeterminism("seed|determin|HASHSEED|CUBLAS_WORKSPACE|HCCL_DETERMINISTIC", std::regex::icase);
    for (const auto& s : reproduce["steps"]) {
      if (s["action"] != "train") continue;
      const auto& argv = s["argv"];
      for (size_t i = 0; i < argv.size(); ++i) {
        std::string a = argv[i];
        if ((a == "--module" || a == "--model") && i + 1 < argv.size()) models.push_back(argv[i + 1]);
        if (a.rfind("--module=", 0) == 0 || a.rfind("--model=", 0) == 0) models.push_back(a.substr(a.find('=') + 1));
        if (std::regex_search(a, kDeterminism)) {
          std::string opt = a;
          if (a.find('=') == std::string::npos && i + 1 < argv.size() && argv[i + 1].get<std::string>().rfind("--", 0) != 0)
            opt += " " + argv[i + 1].get<std::string>();
          determinism.push_back(opt);
        }
      }
      for (const auto& [k, v] : s["env"].items()) {
        if (std::regex_search(k, kDeterminism)) determinism.push_back(k + "=" + v.get<std::string>());
      }
    }
    auto join_unique = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      std::string out;
      for (const auto& s : v) out += (out.empty() ? "" : "  ") + s;
      return out.empty() ? std::string("-") : out;
    };
    kv.pairs.push_back({b.L("模型", "Model"), join_unique(models)});
    kv.pairs.push_back({b.L("确定性选项", "Determinism options"), join_unique(determinism)});
  }
  for (const auto& c : b.model_.cases) {
    const json& steps = c.report["baseline"].value("steps", json());
    std::string range = steps.is_array() && steps.size() == 2 ? Fmt(steps[0]) + "-" + Fmt(steps[1]) : Fmt(steps);
    kv.pairs.push_back({b.L("用例 ", "Case ") + c.name,
                        std::string(b.L("步数 ", "steps ")) + range + ", " + b.L("模式 ", "mode ") +
                            Fmt(c.report.value("mode", json())) + ", preset " + Fmt(c.report.value("preset", json()))});
  }
}

// Chart text in the report's language: titles, axes, legend, tolerance and notes.
ChartSpec OverlayChart(const Builder& b, const CaseData& c, const MetricData& m) {
  ChartSpec spec;
  spec.title = c.name + b.L("：", ": ") + m.name + b.L(" 曲线（基线 vs 候选）", " (baseline vs candidate)");
  spec.x_label = b.L("训练步 step", "step");
  spec.y_label = m.name;
  spec.log_suffix = b.L("（对数坐标）", " (log scale)");
  spec.series.push_back({b.L("基线 baseline", "baseline"), m.steps, m.baseline, BaselineStroke()});
  spec.series.push_back({b.L("候选 candidate", "candidate"), m.steps, m.candidate, CandidateStroke()});
  return spec;
}

ChartSpec DiffChart(const Builder& b, const CaseData& c) {
  ChartSpec spec;
  spec.title = c.name + b.L("：逐 step 绝对差 |候选 - 基线|", ": |candidate - baseline| per step");
  spec.x_label = b.L("训练步 step", "step");
  spec.y_label = b.L("绝对差", "absolute difference");
  spec.log_suffix = b.L("（对数坐标）", " (log scale)");
  spec.log_y = true;
  const Stroke strokes[] = {BaselineStroke(), CandidateStroke(), SecondaryStroke()};
  size_t zeros = 0, total = 0;
  std::optional<double> tolerance;
  bool mixed = false;
  for (size_t i = 0; i < c.metrics.size(); ++i) {
    const auto& m = c.metrics[i];
    Stroke s = strokes[i % 3];
    spec.series.push_back({m.name, m.steps, m.abs_diff, s, /*markers=*/true});
    if (!m.envelope.empty()) {
      // A calibrated comparison: the baseline's own noise, per step, in the metric's colour.
      Stroke e = s;
      e.dash = Dash::kDashed;
      spec.series.push_back({std::string(b.L("噪声包络 ", "noise envelope ")) + m.name, m.steps, m.envelope, e});
    }
    for (double d : m.abs_diff) zeros += d == 0, total += 1;
    if (m.tolerance_abs) {
      if (tolerance && *tolerance != *m.tolerance_abs) mixed = true;
      tolerance = tolerance ? std::min(*tolerance, *m.tolerance_abs) : *m.tolerance_abs;
    }
  }
  if (tolerance && *tolerance > 0) {
    spec.hline = ChartSpec::HLine{*tolerance,
                                  std::string(mixed ? b.L("最小容差 ", "smallest tolerance ") : b.L("容差 ", "tolerance ")) +
                                      Fmt(*tolerance),
                                  ToleranceStroke()};
  }
  if (tolerance && *tolerance == 0) {
    spec.note = b.L("逐位比较（容差 0）：图中每个点都是一次失败",
                    "bitwise mode (tolerance 0): every point drawn is a failure");
  }
  if (c.report.contains("noise") && c.report["noise"].is_object()) {
    const json& n = c.report["noise"];
    spec.note = std::string(b.L("按基线自身噪声判定：", "judged against the baseline's own noise: ")) +
                Fmt(n.value("runs", json())) + b.L(" 次基线运行，安全系数 ", " baseline runs, safety factor ") +
                Fmt(n.value("safety_factor", json())) + b.L("；虚线为噪声包络，点在其上方即失败",
                                                           "; dashed: the envelope, a point above it fails");
  }
  if (zeros == total) {
    spec.note = b.L("所有差异均为 0（逐位一致）：对数坐标上无点可画",
                    "every difference is exactly 0 (bitwise equal): nothing to draw on the log scale");
  } else if (zeros > 0) {
    spec.note += std::string(spec.note.empty() ? "" : b.L("；", "; ")) + std::to_string(zeros) + b.L(" / ", " of ") +
                 std::to_string(total) + b.L(" 个差异为 0，未画在对数坐标上", " differences are 0, not drawn on the log scale");
  }
  return spec;
}

// Probe lines printed by inject_prints and paired by compare_logs (report.json "probes"):
// the evidence of where inside a step the two runs part.
void AddProbes(Builder& b, const CaseData& c) {
  const json& p = c.report.value("probes", json());
  if (!p.is_object()) return;
  b.Heading(3, b.L("探针对比（inject_prints 打印的探针）", "Probe comparison (inject_prints probes)"));
  auto& kv = b.KeyValues(/*monospace=*/true);
  kv.pairs.push_back({b.L("已配对", "matched"), Fmt(p.value("matched", json()))});
  kv.pairs.push_back({b.L("不一致", "divergent"), Fmt(p.value("divergent_count", json()))});
  kv.pairs.push_back({b.L("探针数 基线 / 候选", "probes baseline / candidate"),
                      Fmt(p.value("baseline_count", json())) + " / " + Fmt(p.value("candidate_count", json()))});
  kv.pairs.push_back({b.L("未配对 基线 / 候选", "unmatched baseline / candidate"),
                      Fmt(p.value("unmatched_baseline_count", json())) + " / " +
                          Fmt(p.value("unmatched_candidate_count", json()))});
  const json& first = p.value("first_divergent", json());
  if (!first.is_null()) {
    b.Heading(3, b.L("首个不一致的探针", "First divergent probe"));
    b.Add(Block::Kind::kCode).text = first.dump(2);
  }
}

void AddCase(Builder& b, const CaseData& c) {
  b.Heading(2, std::string(b.L("用例 ", "Case ")) + c.name);
  b.doc_.blocks.back().in_summary = true;
  auto& v = b.Add(Block::Kind::kVerdict);
  v.verdict = c.report["verdict"];
  v.text = c.report["verdict_reason"];
  v.in_summary = true;

  auto& kv = b.KeyValues(/*monospace=*/true);
  for (const char* side : {"baseline", "candidate"}) {
    const json& s = c.report[side];
    kv.pairs.push_back({std::string(side) + " log", s["path"].get<std::string>()});
    kv.pairs.push_back({std::string(side) + " format · steps · sha256",
                        Fmt(s.value("format", json())) + " · " + Fmt(s.value("steps", json())) + " · " +
                            Fmt(s.value("sha256", json()))});
    for (const char* list : {"errors", "warnings"}) {
      const json& items = s.value(list, json::array());
      if (items.is_array() && !items.empty()) {
        std::string text;
        for (const auto& it : items) text += (text.empty() ? "" : "; ") + Fmt(it);
        kv.pairs.push_back({std::string(side) + " " + list, text});
      }
    }
  }

  const json& notes = c.report.value("notes", json());
  if (notes.is_array() && !notes.empty()) {
    std::string text;
    for (const auto& n : notes) text += (text.empty() ? "" : "; ") + Fmt(n);
    kv.pairs.push_back({b.L("compare_logs 备注", "compare_logs notes"), text});
  }

  AddDeterminismSection(c, b.model_.language, b.doc_);

  b.Heading(3, b.L("差异统计", "Difference statistics"));
  b.doc_.blocks.back().in_summary = true;
  auto& t = b.Table({b.L("指标", "Metric"), b.L("最大绝对差 (step)", "max abs (step)"), b.L("平均绝对差", "mean abs"),
                     b.L("最大相对差 (step)", "max rel (step)"), b.L("平均相对差", "mean rel"), b.L("容差", "tolerance"),
                     b.L("超标 step 数", "steps beyond"), "NaN/Inf baseline", "NaN/Inf candidate",
                     b.L("逐位一致", "bitwise equal")});
  auto diff = [](const json& v) { return v.is_number() ? Diff(v.get<double>()) : Fmt(v); };
  auto at = [](const json& step) { return step.is_number() ? " (" + Fmt(step) + ")" : std::string(); };
  for (const auto& m : c.metrics) {
    const json& s = m.stats;
    // A bitwise comparison has no tolerance (null): say so instead of reading into it.
    const json tol = s.contains("tolerance") && s["tolerance"].is_object() ? s["tolerance"] : json::object();
    std::string tol_text;
    if (tol.value("abs", json()).is_number()) tol_text = "abs " + diff(tol["abs"]);
    if (tol.value("rel", json()).is_number()) tol_text += (tol_text.empty() ? "rel " : ", rel ") + diff(tol["rel"]);
    if (tol_text.empty()) tol_text = b.L("逐位 (bitwise)", "bitwise");
    t.rows.push_back({m.name, diff(s.value("max_abs", json())) + at(s.value("max_abs_step", json())),
                      diff(s.value("mean_abs", json())),
                      diff(s.value("max_rel", json())) + at(s.value("max_rel_step", json())),
                      diff(s.value("mean_rel", json())), tol_text, Fmt(s.value("exceeding_count", json())),
                      NanInf(s, "baseline"), NanInf(s, "candidate"), Fmt(s.value("bitwise_equal", json()))});
  }
  t.in_summary = true;

  for (const auto& m : c.metrics) {
    const json& off = m.stats.value("offending", json::array());
    if (!off.is_array() || off.empty()) continue;
    b.Heading(3, std::string(b.L("超标步骤：", "Steps beyond tolerance: ")) + m.name + " (" +
                     Fmt(m.stats.value("exceeding_count", json())) + ")");
    auto& o = b.Table({"step", "baseline", "candidate", "abs", "rel"}, /*monospace=*/true);
    for (size_t i = 0; i < off.size() && i < kOffendingRows; ++i) {
      const json& r = off[i];
      auto num = [&](const char* k, bool exact) {
        const json& v = r.value(k, json());
        return v.is_number() ? (exact ? Exact(v.get<double>()) : Diff(v.get<double>())) : Fmt(v);
      };
      o.rows.push_back({Fmt(r.value("step", json())), num("baseline", true), num("candidate", true), num("abs", false),
                        num("rel", false)});
    }
    if (off.size() > kOffendingRows) {
      b.Paragraph(std::string(b.L("仅列出前 20 个；完整列表见 diff_summary.csv。", "First 20 shown; all are in diff_summary.csv.")));
    }
  }

  AddProbes(b, c);

  b.Heading(3, b.L("曲线", "Charts"));
  for (const auto& m : c.metrics) {
    auto& ch = b.Add(Block::Kind::kChart);
    ch.chart = OverlayChart(b, c, m);
    ch.chart_id = SafeId(c.name + "_" + m.name);
  }
  auto& ch = b.Add(Block::Kind::kChart);
  ch.chart = DiffChart(b, c);
  ch.chart_id = SafeId(c.name + "_abs_diff");
  ch.in_summary = true;
}

void AddReproduce(Builder& b, const json& r) {
  b.Heading(2, b.L("复现步骤", "How to reproduce"));
  if (r.is_null()) {
    b.Paragraph(b.L("本报告未生成 reproduce.json（formats 中未包含 reproduce）。",
                    "No reproduce.json was generated for this report (\"reproduce\" was not among the formats)."));
    return;
  }
  b.Paragraph(b.L("以下命令全部取自 parity 账本（manifest.json）中实际执行并成功的记录。"
                  "一键重放：parity reproduce report/reproduce.json --work-dir 任一新目录",
                  "Every command below is one parity actually ran successfully, taken from the ledger "
                  "(manifest.json). To replay all of it: parity reproduce report/reproduce.json --work-dir NEW_DIR"));
  for (const auto& w : r["warnings"]) b.Paragraph(std::string(b.L("注意：", "Warning: ")) + w.get<std::string>());
  std::string script;
  script += "# 1. clone and check out both commits\n";
  script += ShellQuote({"git", "clone", r["repo"]["clone_url"], "repo"}) + "\n";
  for (const auto& remote : r["repo"]["remotes"]) {
    script += "#    remote " + remote["name"].get<std::string>() + ": " + remote["url"].get<std::string>() + "\n";
  }
  for (const char* side : {"baseline", "candidate"}) {
    std::string wt = r[side]["worktree"].is_string() ? r[side]["worktree"].get<std::string>() : std::string("../") + side;
    script += ShellQuote({"git", "-C", "repo", "worktree", "add", "--detach", wt, r[side]["commit"]}) + "\n";
  }
  if (r["infra"]["tarball"].is_string()) {
    script += "# 2. infra files (" + std::to_string(r["infra"]["files"].size()) + ") into both worktrees\n";
    for (const char* side : {"baseline", "candidate"}) {
      std::string wt = r[side]["worktree"].is_string() ? r[side]["worktree"].get<std::string>() : std::string("../") + side;
      script += ShellQuote({"tar", "-xzf", r["infra"]["tarball"], "-C", wt}) + "\n";
    }
  }
  script += "# 3. the commands parity ran, in order\n";
  for (const auto& s : r["steps"]) {
    script += "# " + s["id"].get<std::string>() + "  " + s["tool"].get<std::string>() + " " + s["action"].get<std::string>();
    if (s["side"].is_string()) script += " " + s["side"].get<std::string>();
    if (s["config"].is_string()) script += " " + s["config"].get<std::string>();
    if (s["host"] != "local") script += "  (on " + s["host"].get<std::string>() + ")";
    script += "\n" + ShellQuote({"cd", s["cwd"]}) + " && ";
    std::vector<std::string> argv;
    if (!s["env"].empty()) {
      argv.push_back("env");
      for (const auto& [k, v] : s["env"].items()) argv.push_back(k + "=" + v.get<std::string>());
    }
    for (const auto& a : s["argv"]) argv.push_back(a);
    script += ShellQuote(argv) + "\n";
  }
  b.Add(Block::Kind::kCode).text = script;

  b.Heading(3, b.L("Infra 文件（两侧共用，见 infra_files.tar.gz）", "Infra files (both sides; in infra_files.tar.gz)"));
  if (r["infra"]["files"].empty()) {
    b.Paragraph(b.L("无。", "None."));
  } else {
    auto& t = b.Table({"#", b.L("文件", "File")}, /*monospace=*/true);
    size_t i = 0;
    for (const auto& f : r["infra"]["files"]) t.rows.push_back({std::to_string(++i), f});
  }
}

void AddLogs(Builder& b) {
  b.Heading(2, b.L("训练日志", "Training logs"));
  auto& links = b.Add(Block::Kind::kLinks);
  fs::path from = b.model_.report_dir / "report";
  for (const auto& log : b.model_.logs) {
    links.pairs.push_back({log.label + ": " + log.path.string(), log.path.lexically_relative(from).string()});
  }
}

void AddAppendix(Builder& b) {
  for (const auto& c : b.model_.cases) {
    b.Heading(2, std::string(b.L("附录：逐 step 差异明细 · ", "Appendix: per-step differences · ")) + c.name);
    std::vector<std::string> header = {"step"};
    for (const auto& m : c.metrics) {
      header.push_back(m.name + " baseline");
      header.push_back(m.name + " candidate");
      header.push_back(m.name + " |diff|");
    }
    auto& t = b.Table(header, /*monospace=*/true);
    size_t rows = std::min(c.csv_rows.size(), kAppendixRows);
    for (size_t i = 0; i < rows; ++i) {
      std::vector<std::string> row = {Fmt(c.metrics[0].steps[i], "%.0f")};
      for (const auto& m : c.metrics) {
        row.push_back(Exact(m.baseline[i]));
        row.push_back(Exact(m.candidate[i]));
        row.push_back(Diff(m.abs_diff[i]));
      }
      t.rows.push_back(std::move(row));
    }
    std::string note = b.L("数值按原值的最短精确表示列出；含相对差异的完整表见 ",
                           "Values are shown in their shortest exact form; the full table with relative differences is in ");
    note += c.csv_path.string();
    if (c.csv_rows.size() > rows) {
      note += b.L("；此处仅列出前 ", "; only the first ") + std::to_string(rows) + b.L(" 行。", " rows are shown here.");
    }
    b.Paragraph(note);
  }
}

}  // namespace

std::string OverallVerdict(const ReportModel& model) {
  bool fail = false, inconclusive = false;
  for (const auto& c : model.cases) {
    fail = fail || c.report["verdict"] == "FAIL";
    inconclusive = inconclusive || c.report["verdict"] == "INCONCLUSIVE";
  }
  return fail ? "FAIL" : inconclusive ? "INCONCLUSIVE" : "PASS";
}

Document BuildDocument(const ReportModel& model, const json& reproduce, const std::string& generated_at) {
  Document doc;
  doc.language = model.language;
  Builder b(model, doc);
  doc.title = model.title.empty() ? b.L("数值精度对比报告", "Numerical parity report") : model.title;
  doc.subtitle = std::string(b.L("生成时间 ", "Generated ")) + generated_at + " · parity " + PARITY_VERSION;
  AddSummary(b);
  AddSetup(b, reproduce);
  for (const auto& c : model.cases) AddCase(b, c);
  if (model.hunt) {
    // The root cause's heading and its first facts (first divergent API, inputs equal, ...).
    size_t first = doc.blocks.size();
    AddHuntSection(*model.hunt, model.language, doc);
    for (size_t i = first, kv = 0; i < doc.blocks.size() && kv == 0; ++i) {
      doc.blocks[i].in_summary = true;
      kv += doc.blocks[i].kind == Block::Kind::kKeyValues;
    }
  }
  AddReproduce(b, reproduce);
  AddLogs(b);
  AddAppendix(b);
  return doc;
}

Document PrSummary(const Document& full) {
  const bool zh = full.language == Language::kZh;
  Document doc;
  doc.language = full.language;
  doc.title = full.title + (zh ? " · PR 摘要" : " · PR summary");
  doc.subtitle = full.subtitle;
  for (const auto& b : full.blocks)
    if (b.in_summary) doc.blocks.push_back(b);
  Block& h = doc.blocks.emplace_back();
  h.kind = Block::Kind::kHeading;
  h.level = 2;
  h.text = zh ? "完整报告与复现" : "Full report and replay";
  Block& p = doc.blocks.emplace_back();
  p.kind = Block::Kind::kParagraph;
  p.text = zh ? "完整报告（环境、复现步骤、曲线、逐 step 明细、训练日志）：numerical_stability_report.pdf 与 "
                "report.html；逐 step 差异：diff_summary.csv。一键重放：parity reproduce report/reproduce.json "
                "--work-dir 任一新目录"
              : "The full report (environment, reproduce steps, charts, per-step table, training logs) is "
                "numerical_stability_report.pdf and report.html; per-step differences are in diff_summary.csv. "
                "Replay everything: parity reproduce report/reproduce.json --work-dir NEW_DIR";
  return doc;
}

std::vector<const Block*> Charts(const Document& doc) {
  std::vector<const Block*> out;
  for (const auto& b : doc.blocks)
    if (b.kind == Block::Kind::kChart) out.push_back(&b);
  return out;
}

}  // namespace parity::report
