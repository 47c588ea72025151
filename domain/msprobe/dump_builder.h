// Inside parity_msprobe: turns parsed dump.json text (simdjson On Demand) into a Dump's
// entries and rows by msprobe's flattening rule. One builder serves every window of a file,
// so interning and entry numbering carry over. Throws simdjson_error / runtime_error on
// malformed input; dump.cpp turns them into Status at the library boundary.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "domain/msprobe/dump.h"

namespace parity::msprobe::internal {

class DumpBuilder {
 public:
  explicit DumpBuilder(Dump& dump) : dump_(dump), pool_(*dump.pool) {}

  // A whole top-level object: task, level, framework and the "data" entries.
  void ParseTop(simdjson::ondemand::document& doc);
  // The members of "data" (one window of them).
  void ParseEntries(simdjson::ondemand::object data);

  // Tensor leaves that carried an "md5" in the file.
  uint64_t md5_leaves() const { return md5_leaves_; }

 private:
  uint32_t Intern(std::string_view text);
  uint32_t InternShape(std::string_view raw_array);
  uint32_t InternSuffix();  // path_
  void ParseBody(simdjson::ondemand::object body);
  void Flatten(simdjson::ondemand::value value, RowState state, std::vector<Row>& out, int depth, bool params_grad);
  Row ParseLeaf(simdjson::ondemand::object object, RowState state);

  Dump& dump_;
  TextPool& pool_;
  std::array<uint32_t, 8> recent_{};  // consecutive leaves mostly repeat a dtype seen a moment ago
  size_t next_recent_ = 0;
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Raw JSON of a shape -> pool id (looked up by view: no string built per leaf).
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> shapes_;
  std::string last_shape_raw_;
  uint32_t last_shape_ = 0;
  std::array<uint32_t, 8> recent_suffixes_{};  // ".input.0", ".input.1", ".output.0" ...
  size_t next_suffix_ = 0;
  std::string path_;  // the row name being built, relative to its entry
  std::vector<Row> args_, kwargs_, inputs_, outputs_, params_;
  uint32_t current_entry_ = 0;
  uint64_t md5_leaves_ = 0;
};

}  // namespace parity::msprobe::internal
