// Inside parity_msprobe: turns parsed dump.json text into a Dump's entries and rows by
// msprobe's flattening rule, from simdjson's DOM (the fast path: its parser is compiled for
// this CPU) or On Demand (what DOM rejects: Python's NaN / Infinity, huge integers). Both
// walks only collect a leaf's fields; one MakeRow turns them into the row. One builder
// serves every window of a file, so interning and entry numbering carry over. Throws
// simdjson_error / runtime_error on malformed input; dump.cpp turns them into Status at the
// library boundary.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <simdjson.h>

#include "domain/msprobe/dump.h"

namespace parity::msprobe::internal {

// A JSON scalar as Python's json module would have produced it, NaN/Infinity included.
struct Scalar {
  enum class Kind { kNull, kBool, kInt, kFloat, kString } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;  // kString
};

// What one leaf object (a dict with a string "type") holds, as msprobe's gen_op_item reads it.
struct LeafFields {
  std::string_view type, dtype, md5, data_name;  // views into the parsed text
  std::string dtype_text, group_ranks;           // str() of non-string values
  bool has_value = false, value_is_list = false, has_md5 = false, has_shape = false;
  uint32_t shape = 0;       // pool id
  Scalar value;
  std::string value_str;    // str(value)
  size_t value_len = 0;     // element count when the value is a list (slice)
  uint8_t requires_grad = 2;
  std::array<StatValue, 4> stats{};
};

// Whether two texts of `size` bytes are equal. Up to 16 bytes (row suffixes, dtypes) as two
// overlapping word compares, without a call to memcmp.
inline bool SameBytes(const char* a, const char* b, size_t size) {
  auto word = [](const char* p, auto zero) {
    decltype(zero) w;
    std::memcpy(&w, p, sizeof w);
    return w;
  };
  if (size >= 8 && size <= 16) {
    return word(a, uint64_t{}) == word(b, uint64_t{}) && word(a + size - 8, uint64_t{}) == word(b + size - 8, uint64_t{});
  }
  if (size >= 4 && size < 8) {
    return word(a, uint32_t{}) == word(b, uint32_t{}) && word(a + size - 4, uint32_t{}) == word(b + size - 4, uint32_t{});
  }
  return std::memcmp(a, b, size) == 0;
}

// The last few texts interned, checked before the pool's hash map: consecutive leaves mostly
// repeat a text seen a moment ago. Holds views of the pool's (stable) strings.
class RecentTexts {
 public:
  uint32_t Find(std::string_view text) const {
    for (const auto& [view, id] : slots_) {
      if (id != 0 && view.size() == text.size() && SameBytes(view.data(), text.data(), text.size())) return id;
    }
    return 0;
  }
  void Add(std::string_view stored, uint32_t id) { slots_[next_++ % slots_.size()] = {stored, id}; }

 private:
  std::array<std::pair<std::string_view, uint32_t>, 8> slots_{};
  size_t next_ = 0;
};

// Texts seen before -> pool id, in 256 slots picked by a hash of the text's first and last
// eight bytes: row suffixes vary more than RecentTexts' last eight hold (one in ten missed
// them), and one slot is one compare. A slot keeps the last text that hashed to it.
class TextCache {
 public:
  uint32_t Find(std::string_view text) const {
    const Slot& slot = slots_[Index(text)];
    return slot.id != 0 && slot.text.size() == text.size() && SameBytes(slot.text.data(), text.data(), text.size())
               ? slot.id
               : 0;
  }
  void Add(std::string_view stored, uint32_t id) { slots_[Index(stored)] = {stored, id}; }

 private:
  struct Slot {
    std::string_view text;
    uint32_t id = 0;
  };
  static size_t Index(std::string_view text) {
    uint64_t head = 0, tail = 0;
    std::memcpy(&head, text.data(), std::min<size_t>(text.size(), 8));
    if (text.size() > 8) std::memcpy(&tail, text.data() + text.size() - 8, 8);
    uint64_t h = (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xC2B2AE3D27D4EB4Full) ^ text.size();
    return static_cast<size_t>(h >> 56);  // 256 slots
  }
  std::array<Slot, 256> slots_{};
};

// Shapes of up to four dimensions -> pool id, keyed by the dimensions (the DOM walk's shape
// lookup: no text is built or hashed byte by byte per leaf). Open addressing, half full at most.
class ShapeTable {
 public:
  struct Key {
    std::array<int64_t, 4> dims{};
    uint32_t ndim = 0;
  };
  // 0 when absent (pool ids of shape texts are never 0).
  uint32_t Find(const Key& key) const {
    if (slots_.empty()) return 0;
    for (size_t i = Hash(key) & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& slot = slots_[i];
      if (slot.id == 0) return 0;
      if (slot.key.ndim == key.ndim && SameDims(slot.key, key)) return slot.id;
    }
  }
  void Insert(const Key& key, uint32_t id) {
    if (2 * (count_ + 1) > slots_.size()) Grow();
    Place(key, id);
    ++count_;
  }

 private:
  struct Slot {
    Key key;
    uint32_t id = 0;
  };
  // Dimensions past ndim are 0 in every key: four word compares, no call to memcmp.
  static bool SameDims(const Key& a, const Key& b) {
    return ((a.dims[0] ^ b.dims[0]) | (a.dims[1] ^ b.dims[1]) | (a.dims[2] ^ b.dims[2]) | (a.dims[3] ^ b.dims[3])) == 0;
  }
  static size_t Hash(const Key& key) {
    uint64_t h = key.ndim;
    for (uint32_t i = 0; i < key.ndim; ++i) h = (h ^ static_cast<uint64_t>(key.dims[i])) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  void Place(const Key& key, uint32_t id) {
    size_t i = Hash(key) & (slots_.size() - 1);
    while (slots_[i].id != 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = {key, id};
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, old.size() * 2), Slot{});
    for (const Slot& slot : old) {
      if (slot.id != 0) Place(slot.key, slot.id);
    }
  }
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

// A scalar statistic's cell: numbers as numbers, bools and strings as pool texts, null None.
StatValue ToStat(const Scalar& s, TextPool& pool);

constexpr int kMaxDepth = 200;  // msprobe's Const.MAX_DEPTH is 400; real dumps nest a few levels

class DumpBuilder {
 public:
  explicit DumpBuilder(Dump& dump) : dump_(dump), pool_(*dump.pool) {}

  // A whole top-level object: task, level, framework and the "data" entries.
  void ParseTop(simdjson::ondemand::document& doc);
  // The members of "data" (one window of them).
  void ParseEntries(simdjson::ondemand::object data);
  void ParseEntries(simdjson::dom::object data);

  // Tensor leaves that carried an "md5" in the file.
  uint64_t md5_leaves() const { return md5_leaves_; }

 private:
  uint32_t Intern(std::string_view text);
  uint32_t InternShape(std::string_view raw_array);
  uint32_t InternSuffix();  // path_
  // The parts every walk shares: an entry's bounds, the body's buckets in msprobe's order.
  bool BeginEntry(std::string_view key);  // true: a parameters_grad entry (flattened without indexes)
  void EndEntry() { dump_.entries.back().row_count = static_cast<uint32_t>(dump_.rows.size()) - dump_.entries.back().first_row; }
  void BeginParametersGrad() { path_.clear(); }
  void BeginBody() { spans_.clear(); }
  // msprobe's rank of a body key (input_args 0 ... output 4) and its rows' state; sets path_.
  // -1: not a row source.
  int RankOf(std::string_view key, RowState& state);
  void EndBody();
  Row NullRow(RowState state);
  Row MakeRow(LeafFields& fields, RowState state);

  void ParseBody(simdjson::ondemand::object body);
  void Flatten(simdjson::ondemand::value value, RowState state, int depth, bool params_grad);
  Row ParseLeaf(simdjson::ondemand::object object, RowState state);

  void ParseBody(simdjson::dom::object body);
  void Flatten(simdjson::dom::element value, RowState state, int depth, bool params_grad);
  Row ParseLeaf(simdjson::dom::object object, RowState state);
  uint32_t InternShape(simdjson::dom::element shape_array);

  Dump& dump_;
  TextPool& pool_;
  RecentTexts recent_;  // dtypes, shapes
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Raw JSON of a shape -> pool id (looked up by view: no string built per leaf).
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> shapes_;
  std::string last_shape_raw_;
  uint32_t last_shape_ = 0;
  ShapeTable dom_shapes_;  // the DOM walk's shapes by dimensions (more than four: shapes_)
  TextCache suffixes_;  // ".input.0", ".input.1", ".output.0" ...
  std::string path_;  // the row name being built, relative to its entry
  // Rows go straight to dump_.rows; each row source of the body is a span there, which
  // EndBody reorders only when the keys did not come in msprobe's order.
  struct Span {
    int rank;
    uint32_t begin, end;
  };
  std::vector<Span> spans_;
  std::vector<Row> reordered_;  // scratch for that reorder
  uint32_t current_entry_ = 0;
  uint64_t md5_leaves_ = 0;
};

}  // namespace parity::msprobe::internal
