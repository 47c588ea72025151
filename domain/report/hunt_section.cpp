#include "domain/report/hunt_section.h"

#include <string>

namespace parity::report {

namespace {

using json = nlohmann::json;

std::string Scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
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

}  // namespace

void AddHuntSection(const json& hunt, Language language, Document& doc) {
  const bool zh = language == Language::kZh;
  auto add = [&](Block::Kind kind) -> Block& {
    doc.blocks.emplace_back();
    doc.blocks.back().kind = kind;
    return doc.blocks.back();
  };
  auto& h = add(Block::Kind::kHeading);
  h.level = 2;
  h.text = zh ? "根因定位（首个分歧算子）" : "Root cause (first divergent operator)";
  if (!hunt.is_object()) {
    add(Block::Kind::kParagraph).text = hunt.dump(2);
    return;
  }

  auto& kv = add(Block::Kind::kKeyValues);
  kv.monospace = true;
  Flatten(hunt, "", kv.pairs, 0);

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
  visit(visit, hunt, "");

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
