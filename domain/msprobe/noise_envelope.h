// Per-API noise envelopes from repeated baseline dumps (issue #18): K >= 1 more dumps of the
// baseline's own code and environment show how far each row's statistics move from run to
// run. A candidate row then diverges only when it leaves its own row's envelope:
//   |candidate - baseline| > F x (the largest |repeat - baseline| of that statistic)
// for one of the four statistics (max, min, mean, norm), F the safety factor; a row the
// repeats never moved has envelope 0 (any difference counts, as in bitwise mode). The
// statistic is the largest deviation seen, not a variance: K is small (2-5 dumps) and a
// single extreme repeat is exactly the noise a pre-merge check must not call a bug.
// Rows the repeats cannot bound count every difference: a baseline row some repeat has no
// counterpart for (the API sequence itself varies) or whose repeat value is NaN/Inf or
// unparsable where the baseline's is not. md5 mode: a row whose CRC differs between the
// baseline and a repeat is noisy (msprobe's background CRC, non-deterministic kernels), and
// a candidate CRC difference there is within its noise; every other CRC difference counts.
// A dtype or shape difference always counts.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/compare.h"

namespace parity::msprobe {

struct NoiseEnvelope {
  enum class State : uint8_t { kBounded, kUnbounded, kNoisyCrc };
  // Indexed by the baseline dump's row.
  std::vector<std::array<double, 4>> spread;
  std::vector<State> state;
  double safety_factor = 3;
  size_t repeats = 0;
  // Summary for hunt.json: rows bounded with spread 0 / > 0, unbounded, noisy CRCs.
  uint64_t still = 0, moving = 0, unbounded = 0, noisy_crc = 0;
};

// `repeat_tables`: Compare(repeat, baseline) for each repeat (npu = repeat, bench = baseline).
NoiseEnvelope MeasureNoise(const Dump& baseline, const std::vector<const CompareTable*>& repeat_tables,
                           double safety_factor);

// Whether row r of `table` (candidate against the same baseline) leaves its envelope.
bool BeyondNoise(const CompareTable& table, const CompareRow& r, const NoiseEnvelope& noise);

nlohmann::json NoiseEnvelopeJson(const NoiseEnvelope& noise);

}  // namespace parity::msprobe
