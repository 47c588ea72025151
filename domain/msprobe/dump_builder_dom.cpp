// The DumpBuilder's walk over simdjson's DOM: the same flattening as the On Demand walk in
// dump_builder.cpp, over a parsed tape. DOM's parser is dispatched to this CPU's kernel at
// run time and fills the tape in one pass, so a window costs about half of what On Demand
// costs here; it rejects NaN / Infinity and integers beyond 64 bits, whose windows dump.cpp
// hands to the On Demand walk.
#include <charconv>
#include <stdexcept>

#include "domain/msprobe/dump_builder.h"
#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe::internal {

namespace dom = simdjson::dom;

namespace {

template <typename Int>
void AppendInt(std::string& out, Int value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

// str(value) in Python (repr of the elements of lists and dicts).
void AppendPyStr(std::string& out, dom::element value, bool nested) {
  switch (value.type()) {
    case dom::element_type::ARRAY: {
      out += '[';
      bool comma = false;
      for (dom::element element : dom::array(value)) {
        if (comma) out += ", ";
        AppendPyStr(out, element, true);
        comma = true;
      }
      out += ']';
      return;
    }
    case dom::element_type::OBJECT: {
      out += '{';
      bool comma = false;
      for (dom::key_value_pair field : dom::object(value)) {
        if (comma) out += ", ";
        out += PyStrRepr(field.key);
        out += ": ";
        AppendPyStr(out, field.value, true);
        comma = true;
      }
      out += '}';
      return;
    }
    case dom::element_type::INT64: return AppendInt(out, int64_t(value));
    case dom::element_type::UINT64: return AppendInt(out, uint64_t(value));
    case dom::element_type::DOUBLE: out += PyFloatRepr(double(value)); return;
    case dom::element_type::STRING:
      if (nested) out += PyStrRepr(std::string_view(value));
      else out += std::string_view(value);
      return;
    case dom::element_type::BOOL: out += bool(value) ? "True" : "False"; return;
    case dom::element_type::NULL_VALUE: out += "None"; return;
  }
}

std::string PyStr(dom::element value) {
  std::string out;
  AppendPyStr(out, value, false);
  return out;
}

Scalar ScalarOf(dom::element value) {
  Scalar s;
  switch (value.type()) {
    case dom::element_type::STRING:
      s.kind = Scalar::Kind::kString;
      s.text = std::string(std::string_view(value));
      break;
    case dom::element_type::BOOL:
      s.kind = Scalar::Kind::kBool;
      s.boolean = bool(value);
      break;
    case dom::element_type::INT64:
      s.kind = Scalar::Kind::kInt;
      s.number = static_cast<double>(int64_t(value));
      break;
    case dom::element_type::UINT64:
      s.kind = Scalar::Kind::kInt;
      s.number = static_cast<double>(uint64_t(value));
      break;
    case dom::element_type::DOUBLE:
      s.kind = Scalar::Kind::kFloat;
      s.number = double(value);
      break;
    case dom::element_type::NULL_VALUE:
      break;
    case dom::element_type::ARRAY:
    case dom::element_type::OBJECT:
      throw std::runtime_error("not a JSON value: " + PyStr(value).substr(0, 40));
  }
  return s;
}

}  // namespace

void DumpBuilder::ParseEntries(dom::object data) {
  for (dom::key_value_pair field : data) {
    bool params_grad = BeginEntry(field.key);
    if (params_grad) {
      BeginParametersGrad();
      Flatten(field.value, RowState::kParametersGrad, 0, /*params_grad=*/true);
    } else if (field.value.is_object()) {
      ParseBody(dom::object(field.value));
    }
    EndEntry();
  }
}

void DumpBuilder::ParseBody(dom::object body) {
  BeginBody();
  for (dom::key_value_pair field : body) {
    RowState state;
    int rank = RankOf(field.key, state);
    if (rank < 0) continue;
    uint32_t begin = static_cast<uint32_t>(dump_.rows.size());
    Flatten(field.value, state, 0, false);
    spans_.push_back({rank, begin, static_cast<uint32_t>(dump_.rows.size())});
  }
  EndBody();
}

void DumpBuilder::Flatten(dom::element value, RowState state, int depth, bool params_grad) {
  if (depth > kMaxDepth) throw std::runtime_error("nesting deeper than " + std::to_string(kMaxDepth));
  size_t keep = path_.size();
  switch (value.type()) {
    case dom::element_type::NULL_VALUE:
      dump_.rows.push_back(NullRow(state));
      return;
    case dom::element_type::ARRAY: {
      size_t i = 0;
      for (dom::element element : dom::array(value)) {
        // parameters_grad lists are not indexed: "...parameters_grad.0.weight"
        if (!params_grad) {
          path_ += '.';
          AppendInt(path_, i);
        }
        Flatten(element, state, depth + 1, params_grad);
        path_.resize(keep);
        ++i;
      }
      return;
    }
    case dom::element_type::OBJECT: {
      dom::object object(value);
      dom::element type;
      if (object.at_key("type").get(type) == simdjson::SUCCESS && type.is_string()) {
        dump_.rows.push_back(ParseLeaf(object, state));
        return;
      }
      for (dom::key_value_pair field : object) {
        path_ += '.';
        path_ += field.key;
        Flatten(field.value, state, depth + 1, params_grad);
        path_.resize(keep);
      }
      return;
    }
    default:
      return;  // a bare scalar outside a leaf yields no row in msprobe
  }
}

// Python's str() of the shape list: "[2, 5, 16]", looked up by its dimensions. Longer
// shapes and lists that are not all integers are printed and interned each time (rare).
uint32_t DumpBuilder::InternShape(dom::element shape) {
  ShapeTable::Key key;
  for (dom::element dim : dom::array(shape)) {
    int64_t value = 0;
    if (key.ndim == key.dims.size() || dim.get_int64().get(value) != simdjson::SUCCESS) return Intern(PyStr(shape));
    key.dims[key.ndim++] = value;
  }
  if (uint32_t id = dom_shapes_.Find(key)) return id;
  uint32_t id = Intern(PyStr(shape));
  dom_shapes_.Insert(key, id);
  return id;
}

Row DumpBuilder::ParseLeaf(dom::object object, RowState state) {
  LeafFields f;
  for (dom::key_value_pair field : object) {
    std::string_view key = field.key;
    dom::element v = field.value;
    int stat = -1;
    switch (key.size()) {
      case 3:
        if (key == "Max") stat = 0;
        else if (key == "Min") stat = 1;
        else if (key == "md5" && v.is_string()) {
          f.md5 = std::string_view(v);
          f.has_md5 = !f.md5.empty();
        }
        break;
      case 4:
        if (key == "Mean") stat = 2;
        else if (key == "Norm") stat = 3;
        else if (key == "type" && v.is_string()) f.type = std::string_view(v);
        break;
      case 5:
        if (key == "dtype") {
          if (v.is_string()) {
            f.dtype = std::string_view(v);
          } else {
            f.dtype_text = PyStr(v);
            f.dtype = f.dtype_text;
          }
        } else if (key == "shape") {
          f.has_shape = true;
          f.shape = v.is_array() ? InternShape(v) : Intern(PyStr(v));
        } else if (key == "value") {
          f.has_value = true;
          if (v.is_array()) {
            f.value_is_list = true;
            f.value_len = dom::array(v).size();
            f.value_str = PyStr(v);
          } else if (v.is_object()) {
            f.value_str = PyStr(v);
          } else {
            f.value = ScalarOf(v);
            f.value_str = f.value.kind == Scalar::Kind::kString ? f.value.text : PyStr(v);
          }
        }
        break;
      default:
        if (key == "requires_grad") {
          if (v.is_bool()) f.requires_grad = bool(v) ? 1 : 0;
        } else if (key == "data_name") {
          if (v.is_string()) f.data_name = std::string_view(v);
        } else if (key == "group_ranks") {
          f.group_ranks = PyStr(v);
        }
    }
    if (stat >= 0) {
      StatValue& s = f.stats[stat];
      switch (v.type()) {
        case dom::element_type::DOUBLE:
          s.kind = StatValue::Kind::kNumber;
          s.number = v.get_double().value_unsafe();  // the type is known: no check, no throw path
          break;
        case dom::element_type::INT64:
        case dom::element_type::UINT64:
          s.kind = StatValue::Kind::kNumber;
          s.integral = true;
          s.number = v.type() == dom::element_type::INT64 ? static_cast<double>(int64_t(v))
                                                          : static_cast<double>(uint64_t(v));
          break;
        default:
          s = ToStat(ScalarOf(v), pool_);
      }
    }
  }
  return MakeRow(f, state);
}

}  // namespace parity::msprobe::internal
