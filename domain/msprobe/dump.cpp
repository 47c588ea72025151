#include "domain/msprobe/dump.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include <simdjson.h>
#include <zlib.h>

#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {

namespace od = simdjson::ondemand;

const char* DumpModeName(DumpMode mode) {
  switch (mode) {
    case DumpMode::kSummary: return "summary";
    case DumpMode::kMd5: return "md5";
    case DumpMode::kAll: return "all";
  }
  return "?";
}

const char* RowStateName(RowState state) {
  switch (state) {
    case RowState::kInput: return "input";
    case RowState::kParameters: return "parameters";
    case RowState::kOutput: return "output";
    case RowState::kParametersGrad: return "parameters_grad";
  }
  return "?";
}

std::string Dump::StatString(const StatValue& value) const {
  switch (value.kind) {
    case StatValue::Kind::kNone: return "None";
    case StatValue::Kind::kText: return texts[value.text];
    case StatValue::Kind::kNumber:
      if (value.integral && std::abs(value.number) < 9.007199254740992e15) {
        return std::to_string(static_cast<long long>(value.number));
      }
      return PyFloatRepr(value.number);
  }
  return "None";
}

std::string Dump::Md5String(const Row& row) const {
  if (row.md5_text != 0) return texts[row.md5_text];
  if (!row.has_md5) return "N/A";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", row.md5);
  return buf;
}

std::string Dump::RequiresGradString(const Row& row) const {
  return row.requires_grad == 2 ? "N/A" : (row.requires_grad ? "True" : "False");
}

namespace {

constexpr int kMaxDepth = 200;  // msprobe's Const.MAX_DEPTH is 400; real dumps nest a few levels

uint32_t Crc32(std::string_view text) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

// A JSON scalar as Python's json module would have produced it, NaN/Infinity included.
struct Scalar {
  enum class Kind { kNull, kBool, kInt, kFloat, kString } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // kString
};

class DumpBuilder {
 public:
  explicit DumpBuilder(Dump& dump) : dump_(dump) {}

  uint32_t Intern(std::string_view text) {
    if (text.empty()) return 0;
    // Consecutive leaves mostly repeat a dtype or shape seen a moment ago.
    for (uint32_t recent : recent_) {
      if (recent && dump_.texts[recent] == text) return recent;
    }
    auto it = index_.find(text);
    if (it != index_.end()) {
      recent_[next_recent_++ % recent_.size()] = it->second;
      return it->second;
    }
    uint32_t id = static_cast<uint32_t>(dump_.texts.size());
    dump_.texts.emplace_back(text);
    index_.emplace(dump_.texts.back(), id);
    return id;
  }

  void ParseTop(od::document& doc) {
    od::object top = doc.get_object();
    bool saw_data = false;
    for (auto field : top) {
      std::string_view key = field.unescaped_key();
      if (key == "task") dump_.task = std::string(std::string_view(field.value().get_string()));
      else if (key == "level") dump_.level = std::string(std::string_view(field.value().get_string()));
      else if (key == "framework") dump_.framework = std::string(std::string_view(field.value().get_string()));
      else if (key == "data") {
        saw_data = true;
        ParseData(field.value().get_object());
      }
    }
    if (!saw_data) throw std::runtime_error("no \"data\" object at the top level");
  }

 private:
  void ParseData(od::object data) {
    for (auto field : data) {
      std::string name(std::string_view(field.unescaped_key()));
      Entry entry;
      entry.name = name;
      entry.first_row = static_cast<uint32_t>(dump_.rows.size());
      uint32_t entry_index = static_cast<uint32_t>(dump_.entries.size());
      current_entry_ = entry_index;
      dump_.entries.push_back(std::move(entry));
      od::value body = field.value();
      if (IsParametersGrad(name)) {
        std::vector<Row> grads;
        path_.clear();
        Flatten(body, path_, RowState::kParametersGrad, grads, 0, /*params_grad=*/true);
        for (Row& row : grads) dump_.rows.push_back(std::move(row));
      } else if (body.type() == od::json_type::object) {
        ParseBody(body.get_object());
      }
      dump_.entries.back().row_count = static_cast<uint32_t>(dump_.rows.size()) - dump_.entries.back().first_row;
    }
  }

  static bool IsParametersGrad(std::string_view name) {
    size_t last = name.rfind('.');
    std::string_view tail = last == std::string_view::npos ? name : name.substr(last + 1);
    if (tail == "parameters_grad") return true;
    if (last == std::string_view::npos) return false;
    std::string_view head = name.substr(0, last);
    size_t prev = head.rfind('.');
    std::string_view second = prev == std::string_view::npos ? head : head.substr(prev + 1);
    return second == "parameters_grad";
  }

  // msprobe reads input_args, input_kwargs, input, output, parameters in that order and
  // then puts parameters before outputs; the JSON key order does not matter.
  void ParseBody(od::object body) {
    for (auto* part : {&args_, &kwargs_, &inputs_, &params_, &outputs_}) part->clear();
    for (auto field : body) {
      std::string_view key = field.unescaped_key();
      std::vector<Row>* bucket = nullptr;
      RowState state = RowState::kInput;
      if (key == "input_args") path_ = ".input", bucket = &args_;
      else if (key == "input_kwargs") path_ = ".input", bucket = &kwargs_;
      else if (key == "input") path_ = ".input", bucket = &inputs_;
      else if (key == "output") path_ = ".output", bucket = &outputs_, state = RowState::kOutput;
      else if (key == "parameters") path_ = ".parameters", bucket = &params_, state = RowState::kParameters;
      if (bucket) Flatten(field.value(), path_, state, *bucket, 0, false);
    }
    for (auto* part : {&args_, &kwargs_, &inputs_, &params_, &outputs_}) {
      for (Row& row : *part) dump_.rows.push_back(std::move(row));
    }
  }

  // Whether the object whose '{' starts `token` begins with "type": "..." (msprobe writes
  // the type first in every leaf). Reads ahead in the padded input, stopping at NUL.
  static bool StartsWithStringType(std::string_view token) {
    const char* p = token.data() + 1;
    auto skip = [&p] {
      while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') ++p;
    };
    skip();
    if (std::strncmp(p, "\"type\"", 6) != 0) return false;
    p += 6;
    skip();
    if (*p != ':') return false;
    ++p;
    skip();
    return *p == '"';
  }

  // `path` is the row name built so far (relative to the entry); children append to it and
  // restore it, so no string is built per level.
  void Flatten(od::value value, std::string& path, RowState state, std::vector<Row>& out, int depth,
               bool params_grad) {
    if (depth > kMaxDepth) throw std::runtime_error("nesting deeper than " + std::to_string(kMaxDepth));
    std::string_view token = value.raw_json_token();
    char first = token.empty() ? ' ' : token.front();
    if (first == 'n') {  // null: msprobe's default item, every field None
      Row row;
      row.suffix = path;
      row.entry = current_entry_;
      row.state = state;
      row.dtype = Intern("None");
      row.shape = Intern("None");
      out.push_back(std::move(row));
      return;
    }
    size_t keep = path.size();
    if (first == '[') {
      size_t i = 0;
      for (auto element : value.get_array()) {
        // parameters_grad lists are not indexed: "...parameters_grad.0.weight"
        if (!params_grad) {
          path += '.';
          path += std::to_string(i);
        }
        Flatten(element.value(), path, state, out, depth + 1, params_grad);
        path.resize(keep);
        ++i;
      }
      return;
    }
    if (first != '{') return;  // a bare scalar outside a leaf yields no row in msprobe
    od::object object = value.get_object();
    bool leaf = StartsWithStringType(token);
    if (!leaf) {
      auto type_field = object.find_field_unordered("type");
      if (type_field.error() == simdjson::SUCCESS) {
        leaf = type_field.value_unsafe().type() == od::json_type::string;
      } else if (type_field.error() != simdjson::NO_SUCH_FIELD) {
        throw simdjson::simdjson_error(type_field.error());
      }
      object.reset();
    }
    if (leaf) {
      out.push_back(ParseLeaf(object, path, state));
      return;
    }
    for (auto field : object) {
      path += '.';
      path += std::string_view(field.unescaped_key());
      Flatten(field.value(), path, state, out, depth + 1, params_grad);
      path.resize(keep);
    }
  }

  // Python's str() of a list of ints ("[2, 5, 16]") from its JSON text, whitespace dropped.
  static std::string ShapeText(std::string_view raw) {
    std::string out;
    out.reserve(raw.size());
    for (char c : raw) {
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
      out += c;
      if (c == ',') out += ' ';
    }
    return out;
  }

  static Scalar ReadScalar(od::value value, std::string_view token) {
    Scalar s;
    char first = token.empty() ? ' ' : token.front();
    if (first == '"') {
      s.kind = Scalar::Kind::kString;
      s.text = std::string(std::string_view(value.get_string()));
    } else if (first == 't' || first == 'f') {
      s.kind = Scalar::Kind::kBool;
      s.boolean = bool(value.get_bool());
    } else if (first == 'n') {
      s.kind = Scalar::Kind::kNull;
    } else {
      std::string_view t = token;
      while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t' ||
                            t.back() == ',' || t.back() == '}' || t.back() == ']')) {
        t.remove_suffix(1);
      }
      if (t == "NaN") { s.kind = Scalar::Kind::kFloat; s.number = NAN; return s; }
      if (t == "Infinity") { s.kind = Scalar::Kind::kFloat; s.number = INFINITY; return s; }
      if (t == "-Infinity") { s.kind = Scalar::Kind::kFloat; s.number = -INFINITY; return s; }
      bool integral = t.find_first_of(".eE") == std::string_view::npos;
      double number = 0;
      auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), number);
      if (ec != std::errc() || ptr != t.data() + t.size()) {
        throw std::runtime_error("not a JSON value: " + std::string(t.substr(0, 40)));
      }
      s.kind = integral ? Scalar::Kind::kInt : Scalar::Kind::kFloat;
      s.number = number;
    }
    return s;
  }

  // str(value) in Python, for values nested in lists (repr of elements) or at top.
  static std::string PyStr(od::value value, bool nested) {
    std::string_view token = value.raw_json_token();
    char first = token.empty() ? ' ' : token.front();
    if (first == '[') {
      std::string out = "[";
      bool comma = false;
      for (auto element : value.get_array()) {
        if (comma) out += ", ";
        out += PyStr(element.value(), true);
        comma = true;
      }
      return out + "]";
    }
    if (first == '{') {
      std::string out = "{";
      bool comma = false;
      for (auto field : value.get_object()) {
        if (comma) out += ", ";
        out += PyStrRepr(std::string_view(field.unescaped_key())) + ": " + PyStr(field.value(), true);
        comma = true;
      }
      return out + "}";
    }
    if ((first >= '0' && first <= '9') || first == '-') {
      std::string_view t = TrimToken(token);
      if (t.find_first_of(".eEIN") == std::string_view::npos) return std::string(t);  // an int prints as written
    }
    Scalar s = ReadScalar(value, token);
    switch (s.kind) {
      case Scalar::Kind::kNull: return "None";
      case Scalar::Kind::kBool: return s.boolean ? "True" : "False";
      case Scalar::Kind::kInt: return std::string(TrimToken(token));
      case Scalar::Kind::kFloat: return PyFloatRepr(s.number);
      case Scalar::Kind::kString: return nested ? PyStrRepr(s.text) : s.text;
    }
    return "None";
  }

  static std::string_view TrimToken(std::string_view t) {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t' ||
                          t.back() == ',' || t.back() == '}' || t.back() == ']')) {
      t.remove_suffix(1);
    }
    return t;
  }

  StatValue ToStat(const Scalar& s, bool bool_as_text) {
    StatValue v;
    switch (s.kind) {
      case Scalar::Kind::kNull: break;
      case Scalar::Kind::kBool:
        v.kind = StatValue::Kind::kText;
        v.text = Intern(s.boolean ? "True" : "False");
        break;
      case Scalar::Kind::kInt:
      case Scalar::Kind::kFloat:
        v.kind = StatValue::Kind::kNumber;
        v.number = s.number;
        v.integral = s.kind == Scalar::Kind::kInt;
        break;
      case Scalar::Kind::kString:
        v.kind = StatValue::Kind::kText;
        v.text = Intern(s.text);
        break;
    }
    (void)bool_as_text;
    return v;
  }

  StatValue TextStat(std::string_view text) {
    StatValue v;
    v.kind = StatValue::Kind::kText;
    v.text = Intern(text);
    return v;
  }

  static std::string PyTypeName(const Scalar& s, bool is_list) {
    if (is_list) return "<class 'list'>";
    switch (s.kind) {
      case Scalar::Kind::kNull: return "<class 'NoneType'>";
      case Scalar::Kind::kBool: return "<class 'bool'>";
      case Scalar::Kind::kInt: return "<class 'int'>";
      case Scalar::Kind::kFloat: return "<class 'float'>";
      case Scalar::Kind::kString: return "<class 'str'>";
    }
    return "<class 'NoneType'>";
  }

  // One leaf object (a dict with a string "type"), as msprobe's gen_op_item makes a row.
  Row ParseLeaf(od::object object, const std::string& suffix, RowState state) {
    Row row;
    row.suffix = suffix;
    row.entry = current_entry_;
    row.state = state;
    std::string type, dtype, shape, data_name, group_ranks;
    bool has_value = false, value_is_list = false;
    Scalar value;
    std::string value_str;  // str(value)
    size_t value_len = 0;   // element count when the value is a list (slice)
    bool has_md5 = false;
    std::string md5;
    static constexpr std::string_view kStatKeys[4] = {"Max", "Min", "Mean", "Norm"};
    for (auto field : object) {
      std::string_view key = field.unescaped_key();
      od::value v = field.value();
      if (key == "type") {
        type = std::string(std::string_view(v.get_string()));
      } else if (key == "dtype") {
        std::string_view token = v.raw_json_token();
        dtype = token.empty() || token.front() != '"' ? PyStr(v, false) : std::string(std::string_view(v.get_string()));
      } else if (key == "shape") {
        std::string_view token = v.raw_json_token();
        if (!token.empty() && token.front() == '[') {
          od::array items = v.get_array();
          shape = ShapeText(std::string_view(items.raw_json()));
        } else {
          shape = PyStr(v, false);
        }
      } else if (key == "requires_grad") {
        std::string_view token = v.raw_json_token();
        if (!token.empty() && (token.front() == 't' || token.front() == 'f')) row.requires_grad = bool(v.get_bool()) ? 1 : 0;
      } else if (key == "md5") {
        std::string_view token = v.raw_json_token();
        if (!token.empty() && token.front() == '"') {
          md5 = std::string(std::string_view(v.get_string()));
          has_md5 = !md5.empty();
        }
      } else if (key == "data_name") {
        std::string_view token = v.raw_json_token();
        if (!token.empty() && token.front() == '"') data_name = std::string(std::string_view(v.get_string()));
      } else if (key == "value") {
        has_value = true;
        std::string_view token = v.raw_json_token();
        if (!token.empty() && (token.front() == '[' || token.front() == '{')) {
          value_is_list = token.front() == '[';
          if (value_is_list) {
            // count elements and render in one pass
            value_str = "[";
            bool comma = false;
            for (auto element : v.get_array()) {
              if (comma) value_str += ", ";
              value_str += PyStr(element.value(), true);
              comma = true;
              ++value_len;
            }
            value_str += "]";
          } else {
            value_str = PyStr(v, false);
          }
        } else {
          value = ReadScalar(v, token);
          value_str = value.kind == Scalar::Kind::kInt ? std::string(TrimToken(token)) : PyStr(v, false);
          if (value.kind == Scalar::Kind::kString) value_str = value.text;
        }
      } else if (key == "group_ranks") {
        group_ranks = PyStr(v, false);
      } else {
        for (int i = 0; i < 4; ++i) {
          if (key == kStatKeys[i]) {
            std::string_view token = v.raw_json_token();
            row.stats[i] = ToStat(ReadScalar(v, token), true);
          }
        }
      }
    }

    if (!data_name.empty()) row.data_name = Intern(data_name);
    if (has_md5) {
      if (!dtype.empty()) ++md5_leaves_;
      uint32_t crc = 0;
      auto [ptr, ec] = std::from_chars(md5.data(), md5.data() + md5.size(), crc, 16);
      if (ec == std::errc() && ptr == md5.data() + md5.size() && md5.size() == 8) {
        row.has_md5 = true;
        row.md5 = crc;
      } else {
        row.md5_text = Intern(md5);
      }
    }

    if (!dtype.empty()) {  // a tensor (or ndarray) leaf
      row.tensor = true;
      row.dtype = Intern(dtype);
      row.shape = Intern(shape.empty() ? "None" : shape);
    } else {
      std::string_view last_name = suffix.substr(suffix.rfind('.') + 1);
      if (type == "torch.Size") {
        row.dtype = Intern("torch.Size");
        row.shape = Intern(value_str);
      } else if (type == "slice") {
        row.dtype = Intern("slice");
        row.shape = Intern(value_is_list ? "(" + std::to_string(value_len) + ",)" : "()");
      } else if (type == "ellipsis") {
        row.dtype = Intern("ellipsis");
        row.shape = Intern("[]");
        for (auto& s : row.stats) s = ToStat(value, false);
      } else if (last_name == "src" || last_name == "dst" || last_name == "group_src" || last_name == "group_dst") {
        row.dtype = Intern(type);
        row.shape = Intern("[]");
        for (auto& s : row.stats) s = TextStat(has_value ? value_str : "None");
        row.md5_text = Intern(has_value ? value_str : "None");
      } else if (type == "torch.ProcessGroup") {
        row.dtype = Intern(type);
        row.shape = Intern("[]");
        for (auto& s : row.stats) s = TextStat(group_ranks.empty() ? "None" : group_ranks);
        row.md5_text = Intern(group_ranks.empty() ? "None" : group_ranks);
      } else {
        row.dtype = Intern(has_value ? PyTypeName(value, value_is_list) : "<class 'NoneType'>");
        row.shape = Intern("[]");
        for (auto& s : row.stats) s = value_is_list ? TextStat(value_str) : ToStat(value, false);
      }
    }
    if (!row.has_md5 && row.md5_text == 0) {
      // msprobe: f"{zlib.crc32(str(op_data.get('value', '')).encode()):08x}"
      row.has_md5 = true;
      row.md5 = Crc32(has_value ? value_str : "");
    }
    return row;
  }

  Dump& dump_;
  std::array<uint32_t, 4> recent_{};
  size_t next_recent_ = 0;
  std::string path_;
  std::vector<Row> args_, kwargs_, inputs_, outputs_, params_;
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> index_;
  uint32_t current_entry_ = 0;

 public:
  uint64_t md5_leaves_ = 0;  // tensor leaves that carried an "md5" in the file
};

Result<Dump> ParsePadded(const simdjson::padded_string& text, const std::filesystem::path& origin) {
  Dump dump;
  dump.path = origin;
  dump.bytes = text.size();
  try {
    od::parser parser;
    od::document doc = parser.iterate(text);
    DumpBuilder builder(dump);
    builder.ParseTop(doc);
    dump.has_md5 = builder.md5_leaves_ > 0;
  } catch (const simdjson::simdjson_error& e) {
    return InvalidArgument(origin.string() + ": not a valid msprobe dump.json: " + e.what())
        .WithHint("the file must be the dump.json msprobe wrote (an object with \"task\", \"level\" and \"data\")");
  } catch (const std::exception& e) {
    return InvalidArgument(origin.string() + ": not a valid msprobe dump.json: " + e.what());
  }
  bool real_md5 = dump.has_md5;
  if (dump.task == "tensor") dump.mode = DumpMode::kAll;
  else if (dump.task == "statistics") dump.mode = real_md5 ? DumpMode::kMd5 : DumpMode::kSummary;
  else if (dump.task.empty()) return InvalidArgument(origin.string() + ": dump.json has no \"task\"");
  else {
    return InvalidArgument(origin.string() + ": dump task \"" + dump.task +
                           "\" cannot be compared (msprobe compares only \"statistics\" and \"tensor\" dumps)");
  }
  return dump;
}

}  // namespace

Result<Dump> ParseDumpJson(std::string_view json_text, const std::filesystem::path& origin) {
  simdjson::padded_string text(json_text);
  return ParsePadded(text, origin);
}

Result<Dump> ReadDumpJson(const std::filesystem::path& path) {
  auto loaded = simdjson::padded_string::load(path.string());
  if (loaded.error()) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return NotFound(path.string() + ": no such dump.json");
    return Unavailable(path.string() + ": cannot read: " + simdjson::error_message(loaded.error()));
  }
  simdjson::padded_string text = std::move(loaded).value_unsafe();
  return ParsePadded(text, path);
}

}  // namespace parity::msprobe
