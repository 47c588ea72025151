#include "support/json_reader.h"

#include <cmath>

namespace parity {

std::string StringOrEmpty(const json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const char* JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

Status ExpectObject(const json& value, const std::string& path) {
  if (value.is_object()) return Status::Ok();
  return InvalidArgument(path + ": expected object, got " + JsonTypeName(value));
}

JsonReader::JsonReader(const json& object, std::string path) : object_(&object), path_(std::move(path)) {
  if (!object.is_object()) {
    status_ = InvalidArgument(path_ + ": expected object, got " + JsonTypeName(object));
  }
}

std::string JsonReader::Child(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

bool JsonReader::Has(std::string_view key) const {
  return object_->is_object() && object_->contains(std::string(key));
}

JsonReader& JsonReader::Fail(const std::string& path, const std::string& message) {
  if (status_.ok()) status_ = InvalidArgument(path + ": " + message);
  return *this;
}

bool JsonReader::Begin(std::string_view key, bool required) {
  if (!ok()) return false;
  seen_.insert(std::string(key));
  if (!Has(key)) {
    if (required) Fail(Child(key), "required field is missing");
    return false;
  }
  return true;
}

JsonReader& JsonReader::Allow(std::string_view key) {
  seen_.insert(std::string(key));
  return *this;
}

void JsonReader::Field(std::string_view key, std::string& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_string()) { Fail(Child(key), std::string("expected string, got ") + JsonTypeName(v)); return; }
  out = v.get<std::string>();
}

void JsonReader::Field(std::string_view key, bool& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_boolean()) { Fail(Child(key), std::string("expected boolean, got ") + JsonTypeName(v)); return; }
  out = v.get<bool>();
}

void JsonReader::Field(std::string_view key, int64_t& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (v.is_number_integer()) { out = v.get<int64_t>(); return; }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) { out = static_cast<int64_t>(d); return; }
  }
  Fail(Child(key), std::string("expected integer, got ") + JsonTypeName(v));
}

void JsonReader::Field(std::string_view key, int& out, bool required) {
  int64_t wide = out;
  Field(key, wide, required);
  if (!ok()) return;
  if (wide < INT32_MIN || wide > INT32_MAX) { Fail(Child(key), "integer out of range"); return; }
  out = static_cast<int>(wide);
}

void JsonReader::Field(std::string_view key, double& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_number()) { Fail(Child(key), std::string("expected number, got ") + JsonTypeName(v)); return; }
  out = v.get<double>();
}

void JsonReader::Field(std::string_view key, json& out, bool required) {
  if (!Begin(key, required)) return;
  out = (*object_)[std::string(key)];
}

void JsonReader::Field(std::string_view key, std::vector<std::string>& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_array()) { Fail(Child(key), std::string("expected array of strings, got ") + JsonTypeName(v)); return; }
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      Fail(Child(key) + "[" + std::to_string(i) + "]", std::string("expected string, got ") + JsonTypeName(v[i]));
      return;
    }
    out.push_back(v[i].get<std::string>());
  }
}

void JsonReader::Field(std::string_view key, std::vector<double>& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_array()) { Fail(Child(key), std::string("expected array of numbers, got ") + JsonTypeName(v)); return; }
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) {
      Fail(Child(key) + "[" + std::to_string(i) + "]", std::string("expected number, got ") + JsonTypeName(v[i]));
      return;
    }
    out.push_back(v[i].get<double>());
  }
}

void JsonReader::Field(std::string_view key, std::map<std::string, std::string>& out, bool required) {
  if (!Begin(key, required)) return;
  const json& v = (*object_)[std::string(key)];
  if (!v.is_object()) { Fail(Child(key), std::string("expected object of strings, got ") + JsonTypeName(v)); return; }
  out.clear();
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) {
      Fail(Child(key) + "." + it.key(), std::string("expected string, got ") + JsonTypeName(it.value()));
      return;
    }
    out[it.key()] = it.value().get<std::string>();
  }
}

JsonReader& JsonReader::OneOf(std::string_view key, const std::string& value,
                              std::initializer_list<std::string_view> allowed) {
  if (!ok() || !Has(key)) return *this;
  for (auto a : allowed) if (a == value) return *this;
  std::string list;
  for (auto a : allowed) { if (!list.empty()) list += ", "; list += std::string(a); }
  return Fail(Child(key), "unknown value \"" + value + "\"; expected one of: " + list);
}

Status JsonReader::Finish() {
  if (!ok()) return status_;
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (!seen_.count(it.key())) {
      std::string known;
      for (const auto& k : seen_) { if (!known.empty()) known += ", "; known += k; }
      return InvalidArgument(Child(it.key()) + ": unknown field" +
                             (known.empty() ? std::string() : "; known fields: " + known));
    }
  }
  return Status::Ok();
}

}  // namespace parity
