// The two dumps' call sequences aligned by what each call is, before any value is compared.
// msprobe pairs entries by name and call counter, so one op added or removed shifts every
// later counter of that API and compares different operations from there on. Here an
// entry's signature is its API without the counter and direction kept ("Tensor.__mul__"
// forward), with its rows' names (minus the entry) and shapes (not dtypes: a changed dtype
// is a changed value of the same call); an edit script over
// the two signature sequences (Myers' O(ND) shortest edit script, after the common prefix
// and suffix) pairs equal signatures in order and leaves the candidate-only runs (inserted),
// baseline-only runs (deleted), and a deletion next to an insertion (substituted).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "domain/msprobe/dump.h"

namespace parity::msprobe {

struct AlignedEdit {
  enum class Kind { kInsert, kDelete, kSubstitute };
  Kind kind = Kind::kInsert;
  uint32_t npu_begin = 0, npu_end = 0;      // candidate entries [begin, end)
  uint32_t bench_begin = 0, bench_end = 0;  // baseline entries [begin, end)
};
const char* AlignedEditName(AlignedEdit::Kind kind);

struct Alignment {
  bool complete = false;                 // false: more edits than the bound; not used
  std::vector<int64_t> bench_of_npu;     // per candidate entry: its aligned baseline entry, -1 none
  std::vector<AlignedEdit> edits;        // in sequence order
  // Candidate entries that msprobe's name pairing gives a baseline entry other than the
  // aligned one (or one the alignment leaves unpaired): (candidate entry, baseline entry by name).
  std::vector<std::pair<uint32_t, uint32_t>> mispaired;
  uint64_t mispaired_total = 0;
};

// `by_name`: per candidate entry, the baseline entry msprobe's pairing chose (-1 none).
Alignment AlignEntries(const Dump& npu, const Dump& bench, const std::vector<int64_t>& by_name,
                       size_t max_edits = 4096);

}  // namespace parity::msprobe
