// The first divergent API in execution order. Input is one fact per compare-table row (from
// parity's own compare or from an msprobe compare result read back); the walk goes through
// APIs in table order, which for parity's tables (and msprobe 26's) is dump order:
// execution order, API calls before the module that contains them, forward before the
// backward pass.
//
// An API diverges when one of its outputs (or parameter gradients) diverges under the
// chosen criterion, when a non-tensor argument differs (the call itself changed), or when
// it has no counterpart in the baseline. Under the default criterion ("msprobe") every
// difference the dump shows counts, and the rows msprobe's own pass rules would pass are
// named as such (its relative-error rules pass a changed operand whose inputs already
// differ). Why the API diverges (its cause) is decision.h's: from the evidence gathered
// here, one rule, one sentence.
//
// Differences that are not divergences are reported as noise (decision.h NoiseKind): in md5
// mode, CRCs msprobe computed after a later in-place op changed the tensor (found from the
// dump's own data flow: the later op's output holds that CRC on that side and is equal on
// both), CRC differences whose statistics are equal and that nothing later shows; and
// inputs that differ while every output of the op is equal.
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
#include "domain/msprobe/decision.h"

namespace parity::msprobe {

struct NoiseEnvelope;  // noise_envelope.h

struct DiffCriteria {
  // kMsprobe: a row diverges when it differs at all (as kBitwise), and each divergent row
  // says whether msprobe's own rules would class it warning/error or pass it;
  // kBitwise: any statistic / CRC differs; kTolerance: a statistic differs by more than
  // abs + rel * |baseline| (CRC mode: any difference).
  // kCalibrated: a row diverges when it leaves its own noise envelope, measured from
  // repeated baseline dumps (noise_envelope.h; `noise` must then be set).
  enum class Mode { kMsprobe, kBitwise, kTolerance, kCalibrated };
  Mode mode = Mode::kMsprobe;
  double abs_tol = 0;
  double rel_tol = 0;
  const NoiseEnvelope* noise = nullptr;  // kCalibrated: indexed by the baseline's rows
  // Substrings of API names to skip (msprobe's own: Torch.empty, Torch.fill, Tensor.__setitem__).
  std::vector<std::string> ignore = {"Torch.empty", "Torch.fill", "Tensor.__setitem__"};
};
const char* CriteriaModeName(DiffCriteria::Mode mode);

struct RowFacts {
  // md5 mode: both sides recorded numeric statistics, and whether they are all equal
  // (msprobe computes them synchronously in the hook, the CRC in a background thread).
  bool stats_compared = false;
  bool stats_equal = false;
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
  // Row i's name, a non-tensor argument's two values, what differs besides values.
  std::function<RowText(size_t row)> row_text;
  // md5 mode: per row, a key of the tensor's value on each side (CRC-32, shape, dtype; 0:
  // none), for the data flow the noise rules follow. Empty in the other modes.
  std::vector<uint64_t> npu_value, bench_value;
  bool statistics_only = false;  // "equal" means equal statistics (summary and tensor mode)
};

struct FirstDiff {
  std::optional<uint32_t> entry;        // the first divergent API
  std::string verdict = "none";         // CauseName(decision->cause), or none
  std::string explanation;
  std::optional<Decision> decision;
  Evidence evidence;                    // what the decision was made from
  std::optional<uint32_t> msprobe_first_flagged;  // the first API msprobe's own rules flag
  std::vector<size_t> divergent_rows;   // of that API
  std::vector<size_t> input_rows, output_rows;
  std::vector<uint32_t> next_entries;   // the next divergent APIs
  std::vector<NoiseFinding> noise;      // discounted differences before the first divergence
  uint64_t noise_total = 0;             // discounted differences in the whole table
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
