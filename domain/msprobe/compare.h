// msprobe compare, reproduced: rows of the target dump ("NPU", the candidate) matched to rows
// of the golden dump ("Bench", the baseline) by full flattened name (backward call numbers
// recounted as msprobe does; optionally also by shape, as msprobe 8.x did; optionally
// without call counters, "fuzzy"), a dtype gate, the statistics differences in msprobe's
// exact text form, and msprobe 26's pass/warning/error rules per API (formats.md §1.e,
// msprobe core/compare/indicator_analysis). Real-data metrics (Cosine, ...) are not
// computed here; in tensor mode their rules see no values, as msprobe does for N/A cells.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "domain/msprobe/dump.h"
#include "domain/msprobe/pyrepr.h"
#include "support/status.h"

namespace parity::msprobe {

enum class Level : uint8_t { kPass, kWarning, kError };
const char* LevelName(Level level);

struct CompareOptions {
  bool fuzzy = false;               // match without call counters (k-th call to k-th call)
  bool require_same_shape = false;  // msprobe 8.x merged on name and shape
  // Per NPU entry, the bench entry to pair it with (-1: none), instead of msprobe's names
  // (align.h's alignment); null: msprobe's pairing. Must outlive the call.
  const std::vector<int64_t>* entry_pairing = nullptr;
};

// The checks msprobe runs per API; a row records which of them fired.
enum CheckBit : uint16_t {
  kInfNanError = 1 << 0,
  kRelativeError = 1 << 1,
  kRequiresGradError = 1 << 2,
  kScalarParameterError = 1 << 3,
  kDtypeError = 1 << 4,
  kShapeError = 1 << 5,
  kRelativeWarning = 1 << 6,
  kCrc32Error = 1 << 7,
  kCrc32Warning = 1 << 8,
};

struct CompareRow {
  uint32_t npu = 0;
  int64_t bench = -1;  // -1: no bench data matched (or the dtype gate refused the match)
  bool dtype_gate_failed = false;
  bool requires_grad_consistent = true;
  Level level = Level::kPass;
  uint16_t checks = 0;  // CheckBit set
};

struct CompareTable {
  DumpMode mode = DumpMode::kSummary;
  const Dump* npu = nullptr;    // the target: candidate
  const Dump* bench = nullptr;  // the golden: baseline
  std::vector<CompareRow> rows; // one per NPU row, in NPU dump order
  uint64_t bench_rows_unmatched = 0;
  bool shared_pool = false;     // npu and bench intern their texts in one pool

  const Row& NpuRow(const CompareRow& r) const { return npu->rows[r.npu]; }
  const Row* BenchRow(const CompareRow& r) const { return r.bench < 0 ? nullptr : &bench->rows[r.bench]; }
  // Whether a text of the NPU dump equals one of the bench dump (by id when they share a pool).
  bool SameText(uint32_t npu_text, uint32_t bench_text) const {
    return shared_pool ? npu_text == bench_text : npu->Text(npu_text) == bench->Text(bench_text);
  }
  // Every statistic (or the md5) and dtype/shape identical: bitwise-equal as far as the
  // dump can tell.
  bool Identical(const CompareRow& r) const;
  // msprobe's text for "Max diff".."L2norm diff" (relative=false) or
  // "MaxRelativeErr".."NormRelativeErr" (relative=true); stat 0..3 = max, min, mean, norm.
  std::string DiffText(const CompareRow& r, int stat, bool relative) const;
  // The NPU / Bench statistic as msprobe's table prints it ("Nan" for NaN, "N/A" unmatched).
  std::string NpuStat(const CompareRow& r, int stat) const;
  std::string BenchStat(const CompareRow& r, int stat) const;
  // Whether statistic `stat` prints the same on both sides (no bench: false).
  bool SameStatAt(const CompareRow& r, int stat) const;
  // "NormRelativeErr" as msprobe's checkers read the cell: Str2Float of its text (the
  // percentage / 100; "inf" is inf, "N/A" 0) and whether it ends in '%'. Computed from the
  // numbers when both are finite, without printing the cells.
  struct RelativeValue {
    double value = 0;
    bool percent = false;
  };
  RelativeValue NormRelative(const CompareRow& r) const;
  // Bounds of NormRelative(r).value, which is then a percentage, from the two norms alone
  // (no cell printed and parsed): when both are numbers of ordinary magnitude that differ.
  // nullopt: only NormRelative knows (or knows at once).
  struct RelativeBounds {
    double lo, hi;
  };
  std::optional<RelativeBounds> NormRelativeBounds(const CompareRow& r) const;
  // The Err_message list, as msprobe writes it: ["error: ...", ...].
  std::vector<std::string> Messages(const CompareRow& r) const;
};

// A finite number statistic's table text (Dump::StatString: "16", "0.5", "1e-05") into
// `buf`, without allocating; returns its length.
size_t NumberText(const StatValue& v, char (&buf)[kPyFloatReprMax]);

// DiffText for two different finite numbers x and y whose table texts are xs and ys:
// "Max diff"-style into *abs and "MaxRelativeErr"-style into *rel (either may be null).
void NumberDiffTexts(double x, std::string_view xs, double y, std::string_view ys, std::string* abs,
                     std::string* rel);

// Compares two dumps of the same mode. Errors: modes differ (msprobe refuses too).
Result<CompareTable> Compare(const Dump& npu, const Dump& bench, const CompareOptions& options);

// msprobe's name without its call counter ("Functional.linear.5.forward.input.0" ->
// "Functional.linear.forward.input.0"), as its fuzzy match uses it.
std::string RenameWithoutCounter(const std::string& op_name);

// The entry ("api_origin_name") a row name belongs to, for tables read back from CSV.
std::string EntryOfRowName(const std::string& op_name);

}  // namespace parity::msprobe
