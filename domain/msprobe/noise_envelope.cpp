#include "domain/msprobe/noise_envelope.h"

#include <cmath>

#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {

namespace {

// Both values of a statistic as numbers, or nullopt when either is not a finite number.
std::optional<std::pair<double, double>> Numbers(const CompareTable& t, const CompareRow& r, int stat) {
  auto x = PyParseFloat(t.NpuStat(r, stat));
  auto y = PyParseFloat(t.BenchStat(r, stat));
  if (!x || !y || !std::isfinite(*x) || !std::isfinite(*y)) return std::nullopt;
  return std::pair{*x, *y};
}

}  // namespace

NoiseEnvelope MeasureNoise(const Dump& baseline, const std::vector<const CompareTable*>& repeat_tables,
                           double safety_factor) {
  NoiseEnvelope n;
  n.safety_factor = safety_factor;
  n.repeats = repeat_tables.size();
  n.spread.assign(baseline.rows.size(), {0, 0, 0, 0});
  n.state.assign(baseline.rows.size(), NoiseEnvelope::State::kBounded);
  for (const CompareTable* t : repeat_tables) {
    std::vector<bool> seen(baseline.rows.size(), false);
    for (const CompareRow& r : t->rows) {
      if (r.bench < 0) continue;
      const size_t b = static_cast<size_t>(r.bench);
      seen[b] = true;
      if (n.state[b] != NoiseEnvelope::State::kBounded || t->Identical(r)) continue;
      const Row& row = t->NpuRow(r);
      const Row& base = *t->BenchRow(r);
      if (!t->SameText(row.dtype, base.dtype) || !t->SameText(row.shape, base.shape)) {
        n.state[b] = NoiseEnvelope::State::kUnbounded;
        continue;
      }
      if (t->mode == DumpMode::kMd5) {
        n.state[b] = NoiseEnvelope::State::kNoisyCrc;
        continue;
      }
      for (int s = 0; s < 4; ++s) {
        if (t->SameStatAt(r, s)) continue;
        auto v = Numbers(*t, r, s);
        if (!v) {
          n.state[b] = NoiseEnvelope::State::kUnbounded;
          break;
        }
        n.spread[b][s] = std::max(n.spread[b][s], std::fabs(v->first - v->second));
      }
    }
    for (size_t b = 0; b < seen.size(); ++b) {
      if (!seen[b]) n.state[b] = NoiseEnvelope::State::kUnbounded;  // the repeat has no such row
    }
  }
  for (size_t b = 0; b < n.state.size(); ++b) {
    switch (n.state[b]) {
      case NoiseEnvelope::State::kUnbounded: ++n.unbounded; break;
      case NoiseEnvelope::State::kNoisyCrc: ++n.noisy_crc; break;
      case NoiseEnvelope::State::kBounded: {
        const auto& s = n.spread[b];
        (s[0] == 0 && s[1] == 0 && s[2] == 0 && s[3] == 0 ? n.still : n.moving) += 1;
        break;
      }
    }
  }
  return n;
}

bool BeyondNoise(const CompareTable& table, const CompareRow& r, const NoiseEnvelope& noise) {
  if (r.bench < 0) return true;
  if (table.Identical(r)) return false;
  const Row& row = table.NpuRow(r);
  const Row& base = *table.BenchRow(r);
  if (!table.SameText(row.dtype, base.dtype) || !table.SameText(row.shape, base.shape)) return true;
  const size_t b = static_cast<size_t>(r.bench);
  if (b >= noise.state.size()) return true;
  if (table.mode == DumpMode::kMd5) return noise.state[b] != NoiseEnvelope::State::kNoisyCrc;
  if (noise.state[b] != NoiseEnvelope::State::kBounded) return true;
  for (int s = 0; s < 4; ++s) {
    if (table.SameStatAt(r, s)) continue;
    auto v = Numbers(table, r, s);
    if (!v || std::fabs(v->first - v->second) > noise.safety_factor * noise.spread[b][s]) return true;
  }
  return false;
}

nlohmann::json NoiseEnvelopeJson(const NoiseEnvelope& noise) {
  return {{"statistic", "per baseline row and statistic (max, min, mean, norm): the largest |repeat - baseline| "
                        "over the repeats; a row diverges when |candidate - baseline| > safety_factor x that"},
          {"repeats", noise.repeats},
          {"safety_factor", noise.safety_factor},
          {"rows", {{"still", noise.still}, {"moving", noise.moving}, {"unbounded", noise.unbounded},
                    {"noisy_crc", noise.noisy_crc}}}};
}

}  // namespace parity::msprobe
