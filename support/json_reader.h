// Decoding JSON into typed structs, with errors that name the JSON path
// ("arguments.metrics[2]: expected string, got number"). A JsonReader walks one object:
// each Required/Optional call reads one field; the first problem is kept and the rest of
// the calls become no-ops. Finish() also rejects keys nobody asked for, so a misspelt
// argument is an error instead of being silently ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity {

using json = nlohmann::json;

// "string", "number", "object"... as a JSON Schema would say it.
const char* JsonTypeName(const json& value);

// The string at object[key], or "" when object is not an object, the key is absent or the
// value is not a string. For files parity reads back (records, repository files), where
// json::value(key, "") would throw on a value of another type.
std::string StringOrEmpty(const json& object, std::string_view key);

class JsonReader {
 public:
  // `path` is how the object is named in messages, e.g. "arguments".
  JsonReader(const json& object, std::string path);

  template <typename T>
  JsonReader& Required(std::string_view key, T& out) {
    Field(key, out, /*required=*/true);
    return *this;
  }
  template <typename T>
  JsonReader& Optional(std::string_view key, T& out) {
    Field(key, out, /*required=*/false);
    return *this;
  }
  // A nested object decoded by `decode(JsonReader&)`.
  template <typename F>
  JsonReader& Object(std::string_view key, bool required, F&& decode) {
    if (!Begin(key, required)) return *this;
    const json& v = (*object_)[std::string(key)];
    if (!v.is_object()) return Fail(Child(key), "expected object, got " + std::string(JsonTypeName(v)));
    JsonReader child(v, Child(key));
    decode(child);
    Status s = child.Finish();
    if (!s.ok()) status_ = std::move(s);
    return *this;
  }
  // Restricts a string field already read to a set of values.
  JsonReader& OneOf(std::string_view key, const std::string& value,
                    std::initializer_list<std::string_view> allowed);
  // Marks a key as known without decoding it (read by hand by the caller).
  JsonReader& Allow(std::string_view key);

  bool Has(std::string_view key) const;
  const std::string& path() const { return path_; }
  bool ok() const { return status_.ok(); }

  // The first error, or an error naming the first unexpected key, or ok.
  Status Finish();

  // Records an error found by the caller while validating a field.
  JsonReader& Fail(const std::string& path, const std::string& message);
  std::string Child(std::string_view key) const;

 private:
  bool Begin(std::string_view key, bool required);
  void Field(std::string_view key, std::string& out, bool required);
  void Field(std::string_view key, bool& out, bool required);
  void Field(std::string_view key, int64_t& out, bool required);
  void Field(std::string_view key, int& out, bool required);
  void Field(std::string_view key, double& out, bool required);
  void Field(std::string_view key, json& out, bool required);
  void Field(std::string_view key, std::vector<std::string>& out, bool required);
  void Field(std::string_view key, std::vector<double>& out, bool required);
  void Field(std::string_view key, std::map<std::string, std::string>& out, bool required);
  template <typename T>
  void Field(std::string_view key, std::optional<T>& out, bool required) {
    if (!Has(key) || (*object_)[std::string(key)].is_null()) {
      if (required) Begin(key, true);
      else seen_.insert(std::string(key));
      return;
    }
    T value{};
    Field(key, value, required);
    if (ok()) out = std::move(value);
  }

  const json* object_;
  std::string path_;
  std::set<std::string> seen_;
  Status status_;
};

// Decodes a top-level value that must be an object; names `path` in the error.
Status ExpectObject(const json& value, const std::string& path);

}  // namespace parity
