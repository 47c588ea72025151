#include "domain/report/hunt_section.h"

#include "domain/report/hunt_scan.h"
#include "domain/report/hunt_words.h"

#include <set>
#include <string>

namespace parity::report {

namespace {

using json = nlohmann::json;

std::string Scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.is_number() ? ShortNumber(v) : v.dump();
}

json ObjectOr(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : json::object();
}

bool Contains(const std::string& key, const char* part) { return key.find(part) != std::string::npos; }

bool IsFrameList(const json& v) { return v.is_array() && !v.empty() && v[0].is_object() && v[0].contains("file"); }

std::string FrameField(const json& f, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (f.contains(k)) return Scalar(f[k]);
  return "";
}

// A frame is the user's when it says so, or when it equals the hunt's named user frame.
bool IsUserFrame(const json& f, const json& hunt) {
  for (const char* k : {"user", "is_user", "user_code"})
    if (f.contains(k) && f[k].is_boolean() && f[k].get<bool>()) return true;
  for (const char* k : {"user_frame", "first_user_frame"})
    if (hunt.contains(k) && hunt[k].is_object() && hunt[k].value("file", json()) == f.value("file", json()) &&
        hunt[k].value("line", json()) == f.value("line", json()))
      return true;
  return false;
}

void Flatten(const json& v, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out,
             int depth) {
  for (const auto& [k, x] : v.items()) {
    std::string key = prefix.empty() ? k : prefix + "." + k;
    if (x.is_object() && depth < 2) {
      Flatten(x, key, out, depth + 1);
    } else if (!x.is_array() && !x.is_object()) {
      std::string s = Scalar(x);
      if (s.find('\n') == std::string::npos && s.size() < 400) out.push_back({key, s});
    }
  }
}

// CONTRACTS §4 (parity.hunt/1): the first divergence laid out for a reviewer; fields this
// reader does not know yet are still shown by the generic pass below.
constexpr size_t kRowsShown = 12;

std::string YesNo(const json& v, bool zh) {
  if (!v.is_boolean()) return Scalar(v);
  return v.get<bool>() ? (zh ? "是" : "yes") : (zh ? "否" : "no");
}

std::string RowCell(const json& row, const char* key, const char* side) {
  const json& v = row.value(key, json());
  if (v.is_object()) return Scalar(v.value(side, json()));
  return Scalar(v);
}

// "max 1.2 -> 1.3" style summary of a ROW's statistics (or its md5s, or a compare-result row).
std::string RowValues(const json& row) {
  std::string out;
  if (row.contains("stats") && row["stats"].is_object()) {
    for (const char* stat : {"max", "min", "mean", "norm"}) {
      const json& s = row["stats"].value(stat, json());
      if (!s.is_object()) continue;
      out += (out.empty() ? "" : "; ") + std::string(stat) + " " + Scalar(s.value("baseline", json())) + " -> " +
             Scalar(s.value("candidate", json()));
    }
  } else if (row.contains("md5") && row["md5"].is_object()) {
    out = "md5 " + Scalar(row["md5"].value("baseline", json())) + " -> " + Scalar(row["md5"].value("candidate", json()));
  }
  return out;
}

void AddRows(const json& rows, const std::string& title, bool zh, Document& doc, Block& (*add)(Document&, Block::Kind)) {
  if (!rows.is_array() || rows.empty()) return;
  auto& h = add(doc, Block::Kind::kHeading);
  h.level = 3;
  h.text = title + " (" + std::to_string(rows.size()) + ")";
  auto& t = add(doc, Block::Kind::kTable);
  t.monospace = true;
  t.header = {zh ? "名称" : "name", zh ? "类别" : "state", "dtype (baseline -> candidate)",
              zh ? "数值 (baseline -> candidate)" : "values (baseline -> candidate)", "result"};
  for (size_t i = 0; i < rows.size() && i < kRowsShown; ++i) {
    const json& r = rows[i];
    if (!r.is_object()) continue;
    if (!r.contains("name")) {  // a compare-result row: {column: cell}
      std::string cells;
      for (const auto& [k, v] : r.items()) cells += (cells.empty() ? "" : "; ") + k + "=" + Scalar(v);
      t.rows.push_back({"", "", "", cells, ""});
      continue;
    }
    t.rows.push_back({Scalar(r["name"]), Scalar(r.value("state", json())),
                      RowCell(r, "dtype", "baseline") + " -> " + RowCell(r, "dtype", "candidate"), RowValues(r),
                      Scalar(r.value("result", json()))});
  }
  if (rows.size() > kRowsShown) {
    add(doc, Block::Kind::kParagraph).text =
        zh ? "仅列出前 " + std::to_string(kRowsShown) + " 行；完整内容见 hunt/hunt.json。"
           : "First " + std::to_string(kRowsShown) + " rows shown; all are in hunt/hunt.json.";
  }
}

Block& AddBlock(Document& doc, Block::Kind kind) {
  doc.blocks.emplace_back();
  doc.blocks.back().kind = kind;
  return doc.blocks.back();
}

void AddHuntV1(const json& hunt, bool zh, Document& doc) {
  auto heading3 = [&](std::string text) {
    auto& h = AddBlock(doc, Block::Kind::kHeading);
    h.level = 3;
    h.text = std::move(text);
  };
  const json& fd = hunt.value("first_divergence", json());
  if (fd.is_object()) {
    AddBlock(doc, Block::Kind::kParagraph).text = CauseSentence(fd, zh);
  } else if (hunt.value("explanation", json()).is_string()) {
    AddBlock(doc, Block::Kind::kParagraph).text =
        zh ? "在 " + Scalar(ObjectOr(hunt, "criteria").value("mode", json())) + " 判据下没有 API 分歧" +
                 (hunt.value("noise_total", 0) > 0 ? "（" + Scalar(hunt["noise_total"]) + " 行差异作为噪声剔除，各附原因）" : "") + "。"
           : hunt["explanation"].get<std::string>();
  }
  auto& kv = AddBlock(doc, Block::Kind::kKeyValues);
  kv.monospace = true;
  if (!fd.is_object()) {
    kv.pairs.push_back({zh ? "找到分歧" : "divergence found", YesNo(hunt.value("found", json()), zh)});
  } else {
    kv.pairs.push_back({zh ? "首个分歧 API" : "first divergent API", Scalar(fd.value("api", json()))});
    std::string verdict = Scalar(fd.value("verdict", json()));
    if (zh) {
      static const std::pair<const char*, const char*> kZh[] = {{"operator", "算子本身（operator）"},
                                                                {"argument", "参数（argument）"},
                                                                {"operands", "操作数（operands）"},
                                                                {"upstream", "上游（upstream）"},
                                                                {"unmatched", "无对应（unmatched）"}};
      for (auto [en, cn] : kZh) {
        if (verdict == en) verdict = cn;
      }
    }
    kv.pairs.push_back({zh ? "判定" : "verdict", verdict});
    kv.pairs.push_back({zh ? "张量输入一致" : "tensor inputs equal", YesNo(fd.value("inputs_equal", json()), zh)});
    kv.pairs.push_back({zh ? "非张量参数一致" : "non-tensor arguments equal", YesNo(fd.value("arguments_equal", json()), zh)});
    if (fd.value("msprobe_note", json()).is_string()) {
      const size_t passes = ObjectOr(ObjectOr(fd, "cause"), "evidence").value("msprobe_passes", json::array()).size();
      kv.pairs.push_back({zh ? "msprobe 的判定" : "msprobe's rules",
                          zh ? "msprobe 自身的规则会判定其中 " + std::to_string(passes) + " 行通过；parity 计入 dump 显示的每一处差异"
                             : fd["msprobe_note"].get<std::string>()});
    }
  }
  if (hunt.contains("first_any_difference"))
    kv.pairs.push_back({zh ? "首个有任何差异的 API" : "first API with any difference", Scalar(hunt["first_any_difference"])});
  if (hunt.value("next_divergences", json()).is_array()) {
    std::string next;
    for (const auto& n : hunt["next_divergences"]) next += (next.empty() ? "" : ", ") + Scalar(n);
    kv.pairs.push_back({zh ? "其后的分歧 API" : "next divergent APIs", next.empty() ? "-" : next});
  }
  kv.pairs.push_back({zh ? "模式 / 判据" : "mode / criterion",
                      Scalar(hunt.value("mode", json())) + " / " + Scalar(ObjectOr(hunt, "criteria").value("mode", json()))});
  const json source = ObjectOr(hunt, "source");
  for (const char* side : {"baseline", "candidate"}) {
    const json s = ObjectOr(source, side);
    if (s.contains("dump_json")) kv.pairs.push_back({std::string(side) + " dump", Scalar(s["dump_json"])});
  }
  if (source.contains("compare_result")) kv.pairs.push_back({"compare result", Scalar(source["compare_result"])});
  if (hunt.value("counts", json()).is_object()) {
    std::string counts;
    for (const auto& [k, v] : hunt["counts"].items()) counts += (counts.empty() ? "" : ", ") + k + " " + Scalar(v);
    kv.pairs.push_back({zh ? "统计" : "counts", counts});
  }
  AddHuntScan(hunt, zh, doc);
  if (!fd.is_object()) return;

  const json src = ObjectOr(fd, "source");
  if (!src.empty()) {
    heading3(zh ? "源代码行" : "Source line");
    auto& s = AddBlock(doc, Block::Kind::kKeyValues);
    s.monospace = true;
    std::string file = Scalar(src.value("local_file", src.value("recorded_file", json())));
    s.pairs.push_back({zh ? "位置" : "location", file + ":" + Scalar(src.value("line", json())) + " (" +
                                                     Scalar(src.value("function", json())) + ")"});
    s.pairs.push_back({zh ? "代码" : "code", Scalar(src.value("line_text", src.value("recorded_code", json())))});
    s.pairs.push_back({zh ? "在本次改动的 hunk 中" : "inside a changed hunk", YesNo(src.value("in_changed_hunk", json()), zh)});
    if (src.value("notes", json()).is_array())
      for (const auto& n : src["notes"]) s.pairs.push_back({zh ? "备注" : "note", Scalar(n)});
    auto add_hunk = [&](const json& hunk) {
      heading3((zh ? "Git 改动 " : "Git hunk ") + Scalar(hunk.value("file", json())));
      std::string text = Scalar(hunk.value("header", json())) + "\n";
      for (const auto& l : hunk.value("lines", json::array())) text += Scalar(l) + "\n";
      AddBlock(doc, Block::Kind::kCode).text = text;
    };
    const json& hunk = src.value("hunk", json());
    if (hunk.is_object()) add_hunk(hunk);
    const json& trace = ObjectOr(fd, "cause").value("trace", json());
    if (trace.is_object()) {
      heading3(zh ? "取值来源（从该行追踪到改动）" : "Where the differing value is set (traced from the line)");
      AddBlock(doc, Block::Kind::kParagraph).text = TraceSentence(trace, zh);
      const json& hunks = trace.value("hunks", json::array()).empty() ? trace.value("all_hunks", json::array()) : trace["hunks"];
      for (size_t i = 0; i < hunks.size() && i < 3; ++i) add_hunk(hunks[i]);
    }
  }
  const json& stack = fd.value("stack", json());
  if (IsFrameList(stack)) {
    heading3(zh ? "调用栈（最内层在前，=> 标记首个用户代码帧）" : "Stack (innermost first, => marks the first user frame)");
    auto& t = AddBlock(doc, Block::Kind::kTable);
    t.monospace = true;
    t.header = {"", "file", "line", "function", "code"};
    const json& uf = fd.value("user_frame", json());
    bool marked = false;
    for (const auto& f : stack) {
      bool user = !marked && uf.is_object() && uf.value("file", json()) == f.value("file", json()) &&
                  uf.value("line", json()) == f.value("line", json());
      marked = marked || user;
      t.rows.push_back({user ? "=>" : "", FrameField(f, {"file"}), FrameField(f, {"line"}), FrameField(f, {"function"}),
                        FrameField(f, {"code"})});
    }
  } else if (fd.value("stack_note", json()).is_string()) {
    AddBlock(doc, Block::Kind::kParagraph).text = std::string(zh ? "无调用栈：" : "No stack: ") + fd["stack_note"].get<std::string>();
  }
  AddRows(fd.value("differing_inputs", json()), zh ? "不同的输入" : "Differing inputs", zh, doc, AddBlock);
  AddRows(fd.value("differing_arguments", json()), zh ? "不同的非张量参数" : "Differing arguments", zh, doc, AddBlock);
  AddRows(fd.value("divergent_rows", json()), zh ? "分歧行" : "Divergent rows", zh, doc, AddBlock);
  const json& noise = hunt.value("noise", json());
  if (noise.is_array() && !noise.empty()) {
    heading3((zh ? "被剔除的差异（噪声） " : "Differences not counted (noise) ") + std::to_string(noise.size()));
    auto& t = AddBlock(doc, Block::Kind::kTable);
    t.monospace = true;
    t.header = {"api", zh ? "行" : "row", "kind", zh ? "说明" : "explanation"};
    for (size_t i = 0; i < noise.size() && i < kRowsShown; ++i)
      t.rows.push_back({Scalar(noise[i].value("api", json())), Scalar(ObjectOr(noise[i], "row").value("name", json())),
                        Scalar(noise[i].value("kind", json())), NoiseKindText(noise[i], zh)});
  }
}

}  // namespace

void AddHuntSection(const json& hunt, Language language, Document& doc) {
  const bool zh = language == Language::kZh;
  auto add = [&](Block::Kind kind) -> Block& { return AddBlock(doc, kind); };
  auto& h = add(Block::Kind::kHeading);
  h.level = 2;
  h.text = zh ? "根因定位（首个分歧算子）" : "Root cause (first divergent operator)";
  if (!hunt.is_object()) {
    add(Block::Kind::kParagraph).text = hunt.dump(2);
    return;
  }
  const bool v1 = hunt.value("schema", json()) == "parity.hunt/1";
  if (v1) AddHuntV1(hunt, zh, doc);

  // Probe evidence and anything else this reader does not lay out itself: for a file of
  // another shape, every scalar; for parity.hunt/1, the keys the contract does not name.
  static const std::set<std::string> kKnownV1 = {
      "schema", "source", "mode", "criteria", "matching", "real_data_metrics", "found", "explanation",
      "first_divergence", "next_divergences", "noise", "noise_total", "msprobe_first_flagged", "first_any_difference",
      "counts", "compare_table", "hunt_json", "heatmap", "scan"};
  json rest = json::object();
  for (const auto& [k, x] : hunt.items())
    if (!v1 || !kKnownV1.count(k)) rest[k] = x;
  // parity hunt's outcome: its verdict and conclusion in the report's language, the
  // iterations as a table; the rest of its object below.
  if (v1 && rest.contains("hunt") && rest["hunt"].is_object()) {
    json& h2 = rest["hunt"];
    auto& hh = add(Block::Kind::kHeading);
    hh.level = 3;
    hh.text = zh ? "parity hunt 结论" : "parity hunt conclusion";
    auto& hv = add(Block::Kind::kKeyValues);
    hv.pairs.push_back({zh ? "结论" : "verdict", HuntVerdictName(h2.value("verdict", ""), zh)});
    hv.pairs.push_back({zh ? "说明" : "explanation", HuntSentence(h2, zh)});
    AddHuntIterations(h2, zh, doc);
    for (const char* k : {"verdict", "explanation", "iterations"}) h2.erase(k);
  }
  if (rest.empty()) return;
  if (v1) {
    auto& eh = add(Block::Kind::kHeading);
    eh.level = 3;
    eh.text = zh ? "其他证据" : "Further evidence";
  }
  auto& kv = add(Block::Kind::kKeyValues);
  kv.monospace = true;
  Flatten(rest, "", kv.pairs, 0);
  if (kv.pairs.empty()) doc.blocks.pop_back();

  // Stacks, hunks, multi-line sources and evidence, wherever in the file they are (one-line
  // values such as the source line are in the key/value list above).
  std::vector<std::pair<std::string, const json*>> stacks, texts;
  auto visit = [&](auto&& self, const json& v, const std::string& path) -> void {
    for (const auto& [k, x] : v.items()) {
      std::string key = path.empty() ? k : path + "." + k;
      if (IsFrameList(x)) stacks.push_back({key, &x});
      else if (x.is_string() && (Contains(k, "hunk") || x.template get<std::string>().find('\n') != std::string::npos))
        texts.push_back({key, &x});
      else if (x.is_object()) self(self, x, key);
      else if (x.is_array() && (Contains(k, "evidence") || Contains(k, "probe")))
        texts.push_back({key, &x});
    }
  };
  visit(visit, rest, "");

  for (const auto& [key, frames] : stacks) {
    auto& sh = add(Block::Kind::kHeading);
    sh.level = 3;
    sh.text = (zh ? "调用栈 " : "Stack ") + key + (zh ? "（=> 标记首个用户代码帧）" : " (=> marks the first user frame)");
    auto& t = add(Block::Kind::kTable);
    t.monospace = true;
    t.header = {"", "file", "line", "function", "code"};
    bool marked = false;
    for (const auto& f : *frames) {
      bool user = !marked && IsUserFrame(f, hunt);
      marked = marked || user;
      t.rows.push_back({user ? "=>" : "", FrameField(f, {"file", "path"}), FrameField(f, {"line", "lineno"}),
                        FrameField(f, {"function", "func", "name"}), FrameField(f, {"code", "text", "source"})});
    }
  }
  for (const auto& [key, value] : texts) {
    auto& th = add(Block::Kind::kHeading);
    th.level = 3;
    th.text = key;
    add(Block::Kind::kCode).text = value->is_string() ? value->get<std::string>() : value->dump(2);
  }
}

}  // namespace parity::report
