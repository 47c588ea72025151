// The first divergent API in execution order. Input is one fact per compare-table row (from
// parity's own compare or from an msprobe compare result read back); the walk goes through
// APIs in table order, which for parity's tables (and msprobe 26's) is dump order:
// execution order, API calls before the module that contains them, forward before the
// backward pass.
//
// An API diverges when one of its outputs (or parameter gradients) diverges under the
// chosen criterion, when a non-tensor argument differs (the call itself changed), or when
// it has no counterpart in the baseline. Then its tensor inputs decide the verdict: equal
// inputs and a different output name the operator itself ("operator"); different inputs
// mean the divergence came from earlier ("upstream"). A tensor input that differs while
// every output matches is not a divergence; on an in-place op it is msprobe's known CRC
// noise (the input is hashed in a background thread after the op already changed it).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/compare.h"

namespace parity::msprobe {

struct DiffCriteria {
  // kMsprobe: a row diverges when msprobe's rules class it warning/error (md5: CRC differs);
  // kBitwise: any statistic / CRC differs; kTolerance: a statistic differs by more than
  // abs + rel * |baseline| (CRC mode: any difference).
  enum class Mode { kMsprobe, kBitwise, kTolerance };
  Mode mode = Mode::kMsprobe;
  double abs_tol = 0;
  double rel_tol = 0;
  // Substrings of API names to skip (msprobe's own: Torch.empty, Torch.fill, Tensor.__setitem__).
  std::vector<std::string> ignore = {"Torch.empty", "Torch.fill", "Tensor.__setitem__"};
};
const char* CriteriaModeName(DiffCriteria::Mode mode);

struct RowFacts {
  uint32_t entry = 0;      // index into DiffInput::entries
  bool output = false;     // an output or a parameter gradient
  bool tensor = true;      // false: a scalar argument (dtype "<class '...'>")
  bool matched = false;
  bool identical = false;  // bitwise equal as far as the dump tells
  bool exceeds = false;    // beyond the tolerance (kTolerance)
  Level level = Level::kPass;
};

struct DiffInput {
  std::vector<std::string_view> entries;  // API / module names, in table order: views into
                                          // the dumps (which must outlive this) or owned_entries
  std::deque<std::string> owned_entries;
  std::vector<RowFacts> rows;
  // A JSON description of row i (names, dtype, shape, both sides' values, class).
  std::function<nlohmann::json(size_t row)> describe;
};

struct FirstDiff {
  std::optional<uint32_t> entry;        // the first divergent API
  std::string verdict = "none";         // operator | upstream | unmatched | none
  std::string explanation;
  std::vector<size_t> divergent_rows;   // of that API
  std::vector<size_t> differing_inputs; // tensor inputs that already differed
  std::vector<size_t> differing_arguments;  // scalar arguments that differ
  std::vector<size_t> input_rows, output_rows;
  std::vector<uint32_t> next_entries;   // the next divergent APIs
  struct Noise {
    uint32_t entry;
    size_t row;
    std::string kind;  // inplace_input_crc | input_only
  };
  std::vector<Noise> noise;             // input-only differences before the first divergence
  std::optional<uint32_t> first_any_difference;  // first API with any bitwise difference
  struct Counts {
    uint64_t rows = 0, matched = 0, unmatched_npu = 0, unmatched_bench = 0, divergent_rows = 0,
             identical_rows = 0, entries = 0, divergent_entries = 0, ignored_entries = 0;
  } counts;
};

FirstDiff FindFirstDiff(const DiffInput& input, const DiffCriteria& criteria, size_t max_next = 5);

// Facts from parity's own compare table.
DiffInput FactsFromTable(const CompareTable& table, const DiffCriteria& criteria);

// Whether an API name is an in-place op (Tensor.add_, Tensor.__iadd__...).
bool IsInPlaceApi(std::string_view entry);

}  // namespace parity::msprobe
