#include "domain/logs/exact_decimal.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace parity::logs {
namespace {

using Int = __int128;

constexpr int kMaxScale = 36;

struct Decimal {
  Int units = 0;  // value = units * 10^-scale
  int scale = 0;
};

std::optional<Int> Pow10(int k) {
  if (k < 0 || k > kMaxScale) return std::nullopt;
  Int p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

std::optional<Int> Mul(Int a, Int b) {
  Int out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<Int> Add(Int a, Int b) {
  Int out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The shortest decimal that reads back to v: its digits and where the point goes.
std::optional<Decimal> Shortest(double v) {
  char buf[40];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return std::nullopt;
  Decimal d;
  bool negative = false, point = false;
  int fraction = 0, exponent = 0;
  const char* p = buf;
  if (p < end && *p == '-') {
    negative = true;
    ++p;
  }
  for (; p < end && *p != 'e'; ++p) {
    if (*p == '.') {
      point = true;
      continue;
    }
    auto next = Mul(d.units, 10);
    if (!next) return std::nullopt;
    d.units = *next + (*p - '0');
    if (point) ++fraction;
  }
  if (p < end && *p == 'e') exponent = std::atoi(p + 1);
  d.scale = fraction - exponent;
  if (d.scale < 0) {
    auto f = Pow10(-d.scale);
    if (!f) return std::nullopt;
    auto scaled = Mul(d.units, *f);
    if (!scaled) return std::nullopt;
    d.units = *scaled;
    d.scale = 0;
  }
  if (negative) d.units = -d.units;
  return d;
}

// The printed value's quanta: round(v * 10^decimals), exact while the digits fit a double.
std::optional<Decimal> Printed(double v, Decimals decimals) {
  if (decimals == kExact) return Shortest(v);
  if (decimals < -22 || decimals > 22) return std::nullopt;
  static constexpr double kPow[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const double scaled = decimals >= 0 ? v * kPow[decimals] : v / kPow[-decimals];
  if (!(std::fabs(scaled) < 0x1p50)) return std::nullopt;  // beyond this the rounding is not exact
  Decimal d;
  d.units = static_cast<Int>(std::llround(scaled));
  d.scale = decimals;
  if (d.scale < 0) {
    auto f = Pow10(-d.scale);
    if (!f) return std::nullopt;
    d.units *= *f;  // |units| < 2^50 and the factor <= 10^22: fits
    d.scale = 0;
  }
  return d;
}

// `d` in quanta of 10^-scale (scale >= d.scale).
std::optional<Int> At(const Decimal& d, int scale) {
  auto f = Pow10(scale - d.scale);
  if (!f) return std::nullopt;
  return Mul(d.units, *f);
}

Int Abs(Int v) { return v < 0 ? -v : v; }

}  // namespace

std::optional<Verdict> DecideStepExactly(double b, Decimals b_decimals, double c, Decimals c_decimals,
                                         const Tolerance& t) {
  const auto bd = Printed(b, b_decimals), cd = Printed(c, c_decimals);
  if (!bd || !cd) return std::nullopt;
  std::optional<Decimal> abs_tol, rel_tol;
  if (t.abs && !(abs_tol = Shortest(*t.abs))) return std::nullopt;
  if (t.rel && !(rel_tol = Shortest(*t.rel))) return std::nullopt;
  int scale = std::max(bd->scale, cd->scale);
  if (abs_tol) scale = std::max(scale, abs_tol->scale);
  if (scale > kMaxScale) return std::nullopt;
  const auto B = At(*bd, scale), C = At(*cd, scale);
  if (!B || !C) return std::nullopt;
  // Twice each side's rounding bound is one quantum of its own printed place.
  const auto quantum = [&](const Decimal& d, Decimals decimals) -> std::optional<Int> {
    if (decimals == kExact) return Int{0};
    return Pow10(scale - d.scale);
  };
  const auto qb = quantum(*bd, b_decimals), qc = quantum(*cd, c_decimals);
  if (!qb || !qc) return std::nullopt;
  const Int u2 = *qb + *qc;  // 2U
  const auto diff = Add(*C, -*B);
  if (!diff) return std::nullopt;
  const auto d2 = Mul(Abs(*diff), 2);  // 2D
  if (!d2) return std::nullopt;
  bool within = false, beyond_abs = true, beyond_rel = true;
  if (abs_tol) {
    const auto T = At(*abs_tol, scale);
    if (!T) return std::nullopt;
    const auto t2 = Mul(*T, 2);
    if (!t2) return std::nullopt;
    within = within || *d2 + u2 <= *t2;   // D + U <= tol
    beyond_abs = *d2 - u2 > *t2;          // D - U > tol
  }
  if (rel_tol) {
    // (D + U) / (|B| - U) <= r  <=>  (2D + 2U) * 10^sr <= units_r * (2|B| - 2U), for |B| > U.
    const auto f = Pow10(rel_tol->scale);
    const auto b2 = Mul(Abs(*B), 2);
    if (!f || !b2) return std::nullopt;
    const auto lhs_in = Mul(*d2 + u2, *f), lhs_out = Mul(*d2 - u2, *f);
    const auto rhs_in = Mul(rel_tol->units, *b2 - u2), rhs_out = Mul(rel_tol->units, *b2 + u2);
    if (!lhs_in || !lhs_out || !rhs_in || !rhs_out) return std::nullopt;
    if (*b2 > u2) within = within || *lhs_in <= *rhs_in;
    beyond_rel = *lhs_out > *rhs_out;
  }
  if (within) return Verdict::kPass;
  if (beyond_abs && beyond_rel) return Verdict::kFail;
  return Verdict::kInconclusive;
}

}  // namespace parity::logs
