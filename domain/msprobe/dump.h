// One msprobe dump.json, flattened into msprobe compare's rows (formats.md §1.b.7): one row
// per tensor or scalar leaf, named by the flattening rule (".input.0", ".input.approximate",
// ".parameters.weight", "parameters_grad.0.weight"), per entry in msprobe's order (inputs,
// parameters, outputs, parameter gradients), entries in dump order, which is execution order.
// The reader is a single forward pass (simdjson On Demand) that keeps only the rows, so a
// dump of several GiB fits in a fraction of its size. NaN / Infinity tokens, which Python's
// json module writes, are accepted.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace parity::msprobe {

// msprobe's names: "summary" (statistics task), "md5" (statistics task with CRC-32
// values), "all" (tensor task: real data in dump_tensor_data/).
enum class DumpMode { kSummary, kMd5, kAll };
const char* DumpModeName(DumpMode mode);

enum class RowState : uint8_t { kInput, kParameters, kOutput, kParametersGrad };
const char* RowStateName(RowState state);

// One of Max/Min/Mean/Norm, or a scalar argument's value, as msprobe's table holds it.
struct StatValue {
  enum class Kind : uint8_t { kNone, kNumber, kText };
  double number = 0;
  uint32_t text = 0;      // kText: index into Dump::texts ("True", "tanh", "...")
  Kind kind = Kind::kNone;
  bool integral = false;  // a JSON integer: printed without ".0", as Python does
};

struct Row {
  std::string suffix;     // the row name minus its entry's name: ".input.0", ".weight"
  uint32_t entry = 0;     // index into Dump::entries
  uint32_t shape = 0;     // index into Dump::texts: "[2, 5, 16]", "[]"
  uint32_t dtype = 0;     // index into Dump::texts: "torch.float32", "<class 'str'>"
  uint32_t data_name = 0; // index into Dump::texts, 0 when absent
  RowState state = RowState::kInput;
  uint8_t requires_grad = 2;  // 0 False, 1 True, 2 absent (printed N/A)
  bool tensor = false;
  bool has_md5 = false;
  uint32_t md5 = 0;       // CRC-32 (msprobe calls it md5); synthesised for scalars as msprobe does
  uint32_t md5_text = 0;  // index into Dump::texts when the md5 cell is not a CRC (process groups)
  std::array<StatValue, 4> stats;  // Max, Min, Mean, Norm
};

struct Entry {
  std::string name;       // "Functional.gelu.0.forward", "Module.fc1.Linear.forward.0"
  uint32_t first_row = 0;
  uint32_t row_count = 0;
};

struct Dump {
  std::filesystem::path path;
  std::string task, level, framework;
  DumpMode mode = DumpMode::kSummary;
  bool has_md5 = false;
  std::vector<Entry> entries;
  std::deque<Row> rows;  // a deque: growing it never copies millions of rows at once
  std::vector<std::string> texts{""};  // interned strings; index 0 is ""
  uint64_t bytes = 0;                  // size of the file read

  std::string RowName(const Row& row) const { return entries[row.entry].name + row.suffix; }
  const std::string& Text(uint32_t index) const { return texts[index]; }
  // The value as pandas prints it in msprobe's table ("0.5", "16", "True", "None").
  std::string StatString(const StatValue& value) const;
  std::string Md5String(const Row& row) const;
  std::string RequiresGradString(const Row& row) const;
};

// Reads and flattens one dump.json. Errors name the file and what is wrong with it.
Result<Dump> ReadDumpJson(const std::filesystem::path& path);

// The same, from text already in memory (tests; `origin` names it in messages).
Result<Dump> ParseDumpJson(std::string_view json_text, const std::filesystem::path& origin);

}  // namespace parity::msprobe
