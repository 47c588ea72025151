// The per-step tolerance rule decided on the printed digits exactly. A value printed with d
// decimals is a whole number of quanta 10^-d, and its true value lies within half a quantum
// of it; a value stored in full (kExact) is read as its shortest decimal form. Differences,
// the rounding bounds and the tolerance are compared as integers at a common quantum, so a
// bound that equals the tolerance is decided the same way every time, whatever the
// floating-point noise of the parsed doubles (2.0000000000131024e-05 for two 5-decimal
// values 2e-5 apart). The tolerance is taken as the decimal its shortest form spells (1e-05).
#pragma once

#include <optional>

#include "domain/logs/compare.h"
#include "domain/logs/series.h"

namespace parity::logs {

// The outcome for finite b and c: kPass (certainly within: some bound holds at the worst of
// the rounding), kFail (certainly beyond: every given bound fails at the best of it),
// kInconclusive otherwise. A relative bound is |c-b| / |b| with |b| taken at its farthest
// from the difference (|b| -/+ the total rounding bound, as compare.cpp does). nullopt when
// the integers would not fit 128 bits (then the caller decides in double precision).
std::optional<Verdict> DecideStepExactly(double b, Decimals b_decimals, double c, Decimals c_decimals,
                                         const Tolerance& tolerance);

}  // namespace parity::logs
