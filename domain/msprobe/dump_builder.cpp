#include "domain/msprobe/dump_builder.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <zlib.h>

#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe::internal {

namespace od = simdjson::ondemand;

namespace {

uint32_t Crc32(std::string_view text) {
  if (text.empty()) return 0;  // most leaves (tensors without a value): zlib's answer, without the call
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view TrimToken(std::string_view t) {
  while (!t.empty() && (IsSpace(t.back()) || t.back() == ',' || t.back() == '}' || t.back() == ']')) t.remove_suffix(1);
  return t;
}

// A key as written; msprobe's keys carry no escapes, but one that does is unescaped.
template <typename Field>  // od::field, or the simdjson_result<od::field> a loop yields
std::string_view Key(Field& field) {
  const char* raw = field.key().raw();
  const char* end = raw;
  while (*end != '"') {
    if (*end == '\\') return field.unescaped_key();
    ++end;
  }
  return {raw, static_cast<size_t>(end - raw)};
}

// A string value as written when it has no escapes (no copy), else unescaped.
std::string_view StringValue(od::value& value, std::string_view token) {
  const char* p = token.data() + 1;
  const char* end = p;
  while (*end != '"') {
    if (*end == '\\') return value.get_string();
    ++end;
  }
  return {p, static_cast<size_t>(end - p)};
}

// A number token (NaN / Infinity included); `integral` as Python's json would type it.
double ParseNumber(std::string_view token, bool& integral) {
  const char* p = token.data();
  const char* end = p + token.size();
  char first = *p;
  if (first == 'N' || first == 'I' || (first == '-' && token.size() > 1 && p[1] == 'I')) {
    std::string_view t = TrimToken(token);
    integral = false;
    if (t == "NaN") return NAN;
    if (t == "Infinity") return INFINITY;
    if (t == "-Infinity") return -INFINITY;
    throw std::runtime_error("not a JSON value: " + std::string(t.substr(0, 40)));
  }
  double number = 0;
  auto [ptr, ec] = std::from_chars(p, end, number);
  if (ec != std::errc()) {
    throw std::runtime_error("not a JSON value: " + std::string(TrimToken(token).substr(0, 40)));
  }
  integral = true;
  for (const char* q = p; q < ptr; ++q) {
    if (*q == '.' || *q == 'e' || *q == 'E') integral = false;
  }
  for (const char* q = ptr; q < end; ++q) {
    if (!IsSpace(*q) && *q != ',' && *q != '}' && *q != ']') {
      throw std::runtime_error("not a JSON value: " + std::string(TrimToken(token).substr(0, 40)));
    }
  }
  return number;
}

Scalar ReadScalar(od::value value, std::string_view token) {
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
    bool integral = false;
    s.number = ParseNumber(token, integral);
    s.kind = integral ? Scalar::Kind::kInt : Scalar::Kind::kFloat;
  }
  return s;
}

// str(value) in Python, for values nested in lists (repr of elements) or at top.
std::string PyStr(od::value value, bool nested) {
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

}  // namespace

StatValue ToStat(const Scalar& s, TextPool& pool) {
  StatValue v;
  switch (s.kind) {
    case Scalar::Kind::kNull: break;
    case Scalar::Kind::kBool:
      v.kind = StatValue::Kind::kText;
      v.text = pool.Intern(s.boolean ? "True" : "False");
      break;
    case Scalar::Kind::kInt:
    case Scalar::Kind::kFloat:
      v.kind = StatValue::Kind::kNumber;
      v.number = s.number;
      v.integral = s.kind == Scalar::Kind::kInt;
      break;
    case Scalar::Kind::kString:
      v.kind = StatValue::Kind::kText;
      v.text = pool.Intern(s.text);
      break;
  }
  return v;
}

namespace {

StatValue TextStat(std::string_view text, TextPool& pool) {
  StatValue v;
  v.kind = StatValue::Kind::kText;
  v.text = pool.Intern(text);
  return v;
}

const char* PyTypeName(const Scalar& s, bool is_list) {
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

// Python's str() of a list of ints ("[2, 5, 16]") from its JSON text, whitespace dropped.
std::string ShapeText(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    if (IsSpace(c)) continue;
    out += c;
    if (c == ',') out += ' ';
  }
  return out;
}

// Whether the object whose '{' starts `token` begins with "type": "..." (msprobe writes
// the type first in every leaf). Reads ahead in the padded input, stopping at NUL.
bool StartsWithStringType(std::string_view token) {
  const char* p = token.data() + 1;
  auto skip = [&p] {
    while (IsSpace(*p)) ++p;
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

bool IsParametersGrad(std::string_view name) {
  size_t last = name.rfind('.');
  std::string_view tail = last == std::string_view::npos ? name : name.substr(last + 1);
  if (tail == "parameters_grad") return true;
  if (last == std::string_view::npos) return false;
  std::string_view head = name.substr(0, last);
  size_t prev = head.rfind('.');
  std::string_view second = prev == std::string_view::npos ? head : head.substr(prev + 1);
  return second == "parameters_grad";
}

}  // namespace

uint32_t DumpBuilder::Intern(std::string_view text) {
  if (text.empty()) return 0;
  if (uint32_t id = recent_.Find(text)) return id;
  uint32_t id = pool_.Intern(text);
  recent_.Add(pool_.Text(id), id);
  return id;
}

uint32_t DumpBuilder::InternShape(std::string_view raw) {
  if (raw == last_shape_raw_) return last_shape_;
  auto it = shapes_.find(raw);
  uint32_t id = it != shapes_.end() ? it->second : shapes_.emplace(raw, Intern(ShapeText(raw))).first->second;
  last_shape_raw_.assign(raw);
  last_shape_ = id;
  return id;
}

void DumpBuilder::ParseTop(od::document& doc) {
  od::object top = doc.get_object();
  bool saw_data = false;
  for (auto field : top) {
    std::string_view key = field.unescaped_key();
    if (key == "task") dump_.task = std::string(std::string_view(field.value().get_string()));
    else if (key == "level") dump_.level = std::string(std::string_view(field.value().get_string()));
    else if (key == "framework") dump_.framework = std::string(std::string_view(field.value().get_string()));
    else if (key == "data") {
      saw_data = true;
      ParseEntries(field.value().get_object());
    }
  }
  if (!saw_data) throw std::runtime_error("no \"data\" object at the top level");
}

bool DumpBuilder::BeginEntry(std::string_view key) {
  std::string_view name = dump_.names.Add(key);
  Entry entry;
  entry.name = name;
  entry.first_row = static_cast<uint32_t>(dump_.rows.size());
  current_entry_ = static_cast<uint32_t>(dump_.entries.size());
  dump_.entries.push_back(entry);
  return IsParametersGrad(name);
}

void DumpBuilder::ParseEntries(od::object data) {
  for (auto field : data) {
    bool params_grad = BeginEntry(Key(field));
    od::value body = field.value();
    if (params_grad) {
      BeginParametersGrad();
      Flatten(body, RowState::kParametersGrad, 0, /*params_grad=*/true);
    } else if (body.type() == od::json_type::object) {
      ParseBody(body.get_object());
    }
    EndEntry();
  }
}

// msprobe reads input_args, input_kwargs, input, output, parameters in that order and then
// puts parameters before outputs; the JSON key order does not matter.
int DumpBuilder::RankOf(std::string_view key, RowState& state) {
  state = RowState::kInput;
  if (key == "input_args") return path_ = ".input", 0;
  if (key == "input_kwargs") return path_ = ".input", 1;
  if (key == "input") return path_ = ".input", 2;
  if (key == "parameters") return state = RowState::kParameters, path_ = ".parameters", 3;
  if (key == "output") return state = RowState::kOutput, path_ = ".output", 4;
  return -1;
}

// The spans in rank order (a stable sort: rows of one rank keep the order they were read in).
void DumpBuilder::EndBody() {
  auto by_rank = [](const Span& a, const Span& b) { return a.rank < b.rank; };
  if (std::is_sorted(spans_.begin(), spans_.end(), by_rank)) return;  // msprobe's order already: nearly always
  const uint32_t first = spans_.front().begin, last = spans_.back().end;
  reordered_.clear();
  for (uint32_t i = first; i < last; ++i) reordered_.push_back(dump_.rows[i]);
  std::stable_sort(spans_.begin(), spans_.end(), by_rank);
  uint32_t at = first;
  for (const Span& span : spans_) {
    for (uint32_t i = span.begin; i < span.end; ++i) dump_.rows[at++] = reordered_[i - first];
  }
}

void DumpBuilder::ParseBody(od::object body) {
  BeginBody();
  for (auto field : body) {
    RowState state;
    int rank = RankOf(Key(field), state);
    if (rank < 0) continue;
    uint32_t begin = static_cast<uint32_t>(dump_.rows.size());
    Flatten(field.value(), state, 0, false);
    spans_.push_back({rank, begin, static_cast<uint32_t>(dump_.rows.size())});
  }
  EndBody();
}

// null: msprobe's default item, every field None.
Row DumpBuilder::NullRow(RowState state) {
  Row row;
  row.suffix = InternSuffix();
  row.entry = current_entry_;
  row.state = state;
  row.dtype = Intern("None");
  row.shape = Intern("None");
  return row;
}

// path_ is the row name built so far (relative to the entry); children append to it and
// restore it, so no string is built per level.
void DumpBuilder::Flatten(od::value value, RowState state, int depth, bool params_grad) {
  if (depth > kMaxDepth) throw std::runtime_error("nesting deeper than " + std::to_string(kMaxDepth));
  std::string_view token = value.raw_json_token();
  char first = token.empty() ? ' ' : token.front();
  if (first == 'n') {
    dump_.rows.push_back(NullRow(state));
    return;
  }
  size_t keep = path_.size();
  if (first == '[') {
    size_t i = 0;
    char digits[24];
    for (auto element : value.get_array()) {
      // parameters_grad lists are not indexed: "...parameters_grad.0.weight"
      if (!params_grad) {
        path_ += '.';
        auto [end, ec] = std::to_chars(digits, digits + sizeof digits, i);
        path_.append(digits, end);
      }
      Flatten(element.value(), state, depth + 1, params_grad);
      path_.resize(keep);
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
    dump_.rows.push_back(ParseLeaf(object, state));
    return;
  }
  for (auto field : object) {
    path_ += '.';
    path_ += Key(field);
    Flatten(field.value(), state, depth + 1, params_grad);
    path_.resize(keep);
  }
}

// One leaf object (a dict with a string "type"), as msprobe's gen_op_item makes a row.
uint32_t DumpBuilder::InternSuffix() {
  if (uint32_t id = suffixes_.Find(path_)) return id;
  uint32_t id = pool_.Intern(path_);
  suffixes_.Add(pool_.Text(id), id);
  return id;
}

Row DumpBuilder::ParseLeaf(od::object object, RowState state) {
  LeafFields f;
  for (auto field : object) {
    // The statistics are most of the keys: matched on the raw text (with its closing quote).
    const char* raw_key = field.key().raw();
    int stat = -1;
    if (raw_key[0] == 'M') {
      if (std::memcmp(raw_key, "Max\"", 4) == 0) stat = 0;
      else if (std::memcmp(raw_key, "Min\"", 4) == 0) stat = 1;
      else if (std::memcmp(raw_key, "Mean\"", 5) == 0) stat = 2;
    } else if (raw_key[0] == 'N' && std::memcmp(raw_key, "Norm\"", 5) == 0) {
      stat = 3;
    }
    std::string_view key = stat >= 0 ? std::string_view() : Key(field);
    od::value v = field.value();
    std::string_view token = v.raw_json_token();
    char first = token.empty() ? ' ' : token.front();
    switch (key.size()) {
      case 0:
        break;
      case 3:
        if (key == "Max") stat = 0;
        else if (key == "Min") stat = 1;
        else if (key == "md5" && first == '"') {
          f.md5 = StringValue(v, token);
          f.has_md5 = !f.md5.empty();
        }
        break;
      case 4:
        if (key == "Mean") stat = 2;
        else if (key == "Norm") stat = 3;
        else if (key == "type") f.type = StringValue(v, token);
        break;
      case 5:
        if (key == "dtype") {
          if (first == '"') {
            f.dtype = StringValue(v, token);
          } else {
            f.dtype_text = PyStr(v, false);
            f.dtype = f.dtype_text;
          }
        } else if (key == "shape") {
          f.has_shape = true;
          if (first == '[') {
            od::array items = v.get_array();
            f.shape = InternShape(std::string_view(items.raw_json()));
          } else {
            f.shape = Intern(PyStr(v, false));
          }
        } else if (key == "value") {
          f.has_value = true;
          if (first == '[') {
            f.value_is_list = true;
            f.value_str = "[";
            bool comma = false;
            for (auto element : v.get_array()) {
              if (comma) f.value_str += ", ";
              f.value_str += PyStr(element.value(), true);
              comma = true;
              ++f.value_len;
            }
            f.value_str += "]";
          } else if (first == '{') {
            f.value_str = PyStr(v, false);
          } else {
            f.value = ReadScalar(v, token);
            f.value_str = f.value.kind == Scalar::Kind::kInt ? std::string(TrimToken(token)) : PyStr(v, false);
            if (f.value.kind == Scalar::Kind::kString) f.value_str = f.value.text;
          }
        }
        break;
      default:
        if (key == "requires_grad") {
          if (first == 't' || first == 'f') f.requires_grad = bool(v.get_bool()) ? 1 : 0;
        } else if (key == "data_name") {
          if (first == '"') f.data_name = StringValue(v, token);
        } else if (key == "group_ranks") {
          f.group_ranks = PyStr(v, false);
        }
    }
    if (stat >= 0) {
      StatValue& s = f.stats[stat];
      if ((first >= '0' && first <= '9') || first == '-' || first == 'N' || first == 'I') {
        s.kind = StatValue::Kind::kNumber;
        od::number number;
        if (first != 'N' && first != 'I' && v.get_number().get(number) == simdjson::SUCCESS) {
          s.integral = !number.is_double();
          s.number = number.is_double() ? number.get_double()
                     : number.is_int64() ? static_cast<double>(number.get_int64())
                                         : static_cast<double>(number.get_uint64());
        } else {
          s.number = ParseNumber(token, s.integral);  // NaN, Infinity, or an error to report
        }
      } else {
        s = ToStat(ReadScalar(v, token), pool_);
      }
    }
  }
  return MakeRow(f, state);
}

// One leaf's fields to its row, as msprobe's gen_op_item makes it.
Row DumpBuilder::MakeRow(LeafFields& f, RowState state) {
  Row row;
  row.suffix = InternSuffix();
  row.entry = current_entry_;
  row.state = state;
  row.requires_grad = f.requires_grad;
  for (int i = 0; i < 4; ++i) {
    if (f.stats[i].kind != StatValue::Kind::kNone) row.set_stat(i, f.stats[i]);
  }
  const std::string_view type = f.type, dtype = f.dtype, md5 = f.md5;
  const std::string& value_str = f.value_str;
  const std::string& group_ranks = f.group_ranks;
  const bool has_value = f.has_value, value_is_list = f.value_is_list;
  if (!f.data_name.empty()) row.data_name = pool_.Intern(f.data_name);
  if (f.has_md5) {
    if (!dtype.empty()) ++md5_leaves_;
    uint32_t crc = 0;
    auto [ptr, ec] = std::from_chars(md5.data(), md5.data() + md5.size(), crc, 16);
    if (ec == std::errc() && ptr == md5.data() + md5.size() && md5.size() == 8) {
      row.has_md5 = true;
      row.md5 = crc;
    } else {
      row.md5_text = pool_.Intern(md5);
    }
  }

  if (!dtype.empty()) {  // a tensor (or ndarray) leaf
    row.tensor = true;
    row.dtype = Intern(dtype);
    row.shape = f.has_shape && f.shape != 0 ? f.shape : Intern("None");
  } else {
    std::string_view suffix = pool_.Text(row.suffix);
    std::string_view last_name = suffix.substr(suffix.rfind('.') + 1);
    auto all_stats = [&row](const StatValue& s) {
      for (int i = 0; i < 4; ++i) row.set_stat(i, s);
    };
    if (type == "torch.Size") {
      row.dtype = Intern("torch.Size");
      row.shape = Intern(value_str);
    } else if (type == "slice") {
      row.dtype = Intern("slice");
      row.shape = Intern(value_is_list ? "(" + std::to_string(f.value_len) + ",)" : "()");
    } else if (type == "ellipsis") {
      row.dtype = Intern("ellipsis");
      row.shape = Intern("[]");
      all_stats(ToStat(f.value, pool_));
    } else if (last_name == "src" || last_name == "dst" || last_name == "group_src" || last_name == "group_dst") {
      row.dtype = Intern(type);
      row.shape = Intern("[]");
      all_stats(TextStat(has_value ? value_str : "None", pool_));
      row.md5_text = pool_.Intern(has_value ? value_str : "None");
    } else if (type == "torch.ProcessGroup") {
      row.dtype = Intern(type);
      row.shape = Intern("[]");
      all_stats(TextStat(group_ranks.empty() ? "None" : group_ranks, pool_));
      row.md5_text = pool_.Intern(group_ranks.empty() ? "None" : group_ranks);
    } else {
      row.dtype = Intern(has_value ? PyTypeName(f.value, value_is_list) : "<class 'NoneType'>");
      row.shape = Intern("[]");
      all_stats(value_is_list ? TextStat(value_str, pool_) : ToStat(f.value, pool_));
    }
  }
  if (!row.has_md5 && row.md5_text == 0) {
    // msprobe: f"{zlib.crc32(str(op_data.get('value', '')).encode()):08x}"
    row.has_md5 = true;
    row.md5 = Crc32(has_value ? value_str : "");
  }
  return row;
}

}  // namespace parity::msprobe::internal
