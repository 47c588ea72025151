// One msprobe dump.json, flattened into msprobe compare's rows (formats.md §1.b.7): one row
// per tensor or scalar leaf, named by the flattening rule (".input.0", ".input.approximate",
// ".parameters.weight", "parameters_grad.0.weight"), per entry in msprobe's order (inputs,
// parameters, outputs, parameter gradients), entries in dump order, which is execution order.
//
// Memory is rows, not the file: a pretty-printed dump.json (msprobe writes json.dump with
// an indent) is mapped (privately: the file is never written) and parsed in place in windows
// split at its "data" entries, each with simdjson (its DOM, or On Demand for what DOM
// rejects: NaN, Infinity); a window's pages are dropped once it is read, so neither the file
// nor simdjson's index is held whole. Rows are fixed-size records: row-name suffixes, dtypes
// and shapes are interned in a TextPool, which the two dumps of one compare share (read into
// one pool, or moved onto one with MoveToPool), so the compare matches them by id. A dump
// without line breaks between its entries, or a file that cannot be mapped, is parsed whole.
// NaN / Infinity tokens, which Python's json module writes, are accepted.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "domain/msprobe/chunked.h"
#include "support/status.h"

namespace parity::msprobe {

// msprobe's names: "summary" (statistics task), "md5" (statistics task with CRC-32
// values), "all" (tensor task: real data in dump_tensor_data/).
enum class DumpMode { kSummary, kMd5, kAll };
const char* DumpModeName(DumpMode mode);

enum class RowState : uint8_t { kInput, kParameters, kOutput, kParametersGrad };
const char* RowStateName(RowState state);

// Interned strings (dtype, shape, row-name suffixes, scalar texts); id 0 is "". Dumps read
// with the same pool give equal texts equal ids.
class TextPool {
 public:
  TextPool();
  uint32_t Intern(std::string_view text);
  const std::string& Text(uint32_t id) const { return texts_[id]; }
  size_t size() const { return texts_.size(); }

 private:
  std::deque<std::string> texts_;  // a deque: the index's keys view these strings
  std::unordered_map<std::string_view, uint32_t> index_;
};

// One of Max/Min/Mean/Norm, or a scalar argument's value, as msprobe's table holds it.
struct StatValue {
  enum class Kind : uint8_t { kNone, kNumber, kText };
  double number = 0;
  uint32_t text = 0;      // kText: a TextPool id ("True", "tanh", "...")
  Kind kind = Kind::kNone;
  bool integral = false;  // a JSON integer: printed without ".0", as Python does
};

struct Row {
  std::array<double, 4> values{};  // Max, Min, Mean, Norm: the number, or a kText's pool id
  uint32_t suffix = 0;    // pool id of the row name minus its entry's name: ".input.0"
  uint32_t entry = 0;     // index into Dump::entries
  uint32_t shape = 0;     // pool id: "[2, 5, 16]", "[]"
  uint32_t dtype = 0;     // pool id: "torch.float32", "<class 'str'>"
  uint32_t data_name = 0; // pool id, 0 when absent
  uint32_t md5 = 0;       // CRC-32 (msprobe calls it md5); synthesised for scalars as msprobe does
  uint32_t md5_text = 0;  // pool id when the md5 cell is not a CRC (process groups)
  uint16_t stat_bits = 0; // per statistic: Kind (2 bits) and integral (1 bit)
  // Bit fields: a row is 64 bytes, one cache line (and a power of two for the chunk index).
  RowState state : 2 = RowState::kInput;
  uint8_t requires_grad : 2 = 2;  // 0 False, 1 True, 2 absent (printed N/A)
  bool tensor : 1 = false;
  bool has_md5 : 1 = false;

  StatValue stat(int i) const {
    StatValue v;
    unsigned bits = (stat_bits >> (3 * i)) & 7u;
    v.kind = static_cast<StatValue::Kind>(bits & 3u);
    v.integral = (bits & 4u) != 0;
    if (v.kind == StatValue::Kind::kNumber) v.number = values[i];
    if (v.kind == StatValue::Kind::kText) v.text = static_cast<uint32_t>(values[i]);
    return v;
  }
  void set_stat(int i, const StatValue& v) {
    unsigned bits = static_cast<unsigned>(v.kind) | (v.integral ? 4u : 0u);
    stat_bits = static_cast<uint16_t>((stat_bits & ~(7u << (3 * i))) | (bits << (3 * i)));
    values[i] = v.kind == StatValue::Kind::kText ? static_cast<double>(v.text) : v.number;
  }
  StatValue::Kind stat_kind(int i) const { return static_cast<StatValue::Kind>((stat_bits >> (3 * i)) & 3u); }
};
static_assert(sizeof(Row) == 64);

struct Entry {
  std::string_view name;  // "Functional.gelu.0.forward"; the text lives in Dump::names
  uint32_t first_row = 0;
  uint32_t row_count = 0;
};

struct Dump {
  std::filesystem::path path;
  std::string task, level, framework;
  DumpMode mode = DumpMode::kSummary;
  bool has_md5 = false;
  ChunkedVector<Entry> entries;
  ChunkedVector<Row> rows;
  std::shared_ptr<TextPool> pool = std::make_shared<TextPool>();
  TextArena names;          // entry names
  uint64_t bytes = 0;       // size of the file read
  uint64_t windows = 0;     // windows the file was parsed in (1: parsed whole)
  uint64_t dom_windows = 0; // of them, read from simdjson's DOM (the others On Demand)

  std::string RowName(const Row& row) const {
    std::string name(entries[row.entry].name);
    return name += pool->Text(row.suffix);
  }
  const std::string& Text(uint32_t id) const { return pool->Text(id); }
  // The value as pandas prints it in msprobe's table ("0.5", "16", "True", "None").
  std::string StatString(const StatValue& value) const;
  std::string Md5String(const Row& row) const;
  std::string RequiresGradString(const Row& row) const;
};

struct ReadOptions {
  std::shared_ptr<TextPool> pool;           // null: each dump gets a pool of its own
  size_t window_bytes = size_t{1} << 20;    // grows when one entry is larger
};

// Reads dump.json files one after the other, keeping its window buffer and simdjson parser
// (and their pages) from one file to the next.
class DumpReader {
 public:
  explicit DumpReader(ReadOptions options = {});
  ~DumpReader();
  // Reads and flattens one dump.json. Errors name the file and what is wrong with it.
  Result<Dump> Read(const std::filesystem::path& path);
  Result<Dump> Parse(std::string_view json_text, const std::filesystem::path& origin);

  struct Buffers;  // the window buffer and parser, defined in dump.cpp

 private:
  ReadOptions options_;
  std::unique_ptr<Buffers> buffers_;
};

// Moves `dump` onto `pool`: its texts are interned there and every id in its rows is
// rewritten, so it compares by id with dumps read into `pool` (dumps read in parallel,
// each with a pool of its own).
void MoveToPool(Dump& dump, const std::shared_ptr<TextPool>& pool);

// One file with a DumpReader of its own.
Result<Dump> ReadDumpJson(const std::filesystem::path& path, const ReadOptions& options = {});

// The same, from text already in memory (tests; `origin` names it in messages).
Result<Dump> ParseDumpJson(std::string_view json_text, const std::filesystem::path& origin,
                           const ReadOptions& options = {});

}  // namespace parity::msprobe
