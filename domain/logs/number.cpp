#include "domain/logs/number.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace parity::logs {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool StartsWithNoCase(std::string_view text, std::string_view word) {
  if (text.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

// A ',' at `i` is a thousands separator when exactly three digits follow it ("7,282"),
// so that a list like "1,2" is not read as one number.
bool ThousandsSeparatorAt(std::string_view text, size_t i) {
  if (i + 3 >= text.size()) return false;
  if (!IsDigit(text[i + 1]) || !IsDigit(text[i + 2]) || !IsDigit(text[i + 3])) return false;
  return i + 4 >= text.size() || !IsDigit(text[i + 4]);
}

bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Clinger's fast path: a decimal mantissa below 2^53 scaled by 10^e with |e| <= 22 is one
// correctly rounded multiplication or division of two exact doubles, so it yields the same
// double as a full parse (std::from_chars), at a fraction of the cost. Log values (1.058957E+01,
// 3.24405) nearly always qualify.
constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr uint64_t kMaxExactMantissa = uint64_t{1} << 53;

std::optional<double> FastPath(uint64_t mantissa, int exponent10, bool negative) {
  if (mantissa > kMaxExactMantissa || exponent10 < -22 || exponent10 > 22) {
    return std::nullopt;
  }
  double v = static_cast<double>(mantissa);
  v = exponent10 < 0 ? v / kPowersOfTen[-exponent10] : v * kPowersOfTen[exponent10];
  return negative ? -v : v;
}

constexpr uint64_t kPow10[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// The ASCII digits at the start of the 8 bytes at p: how many (0-8) and their value, without
// a branch per digit (log numbers end after a varying count of digits, which a digit loop
// mispredicts). Bytes are XORed with '0': a digit becomes 0-9, and adding 0x76 sets the high
// bit of any byte of 10 or more; carries only run towards later bytes, past the first
// non-digit, so it is found exactly. The digits are then shifted to the top (leading zeros)
// and combined by the usual multiply tree (as in fast_float's parse_eight_digits).
inline int LeadingDigits8(const char* p, uint64_t* value) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  const uint64_t x = v ^ 0x3030303030303030ull;
  const uint64_t non_digit = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
  const int n = non_digit ? __builtin_ctzll(non_digit) >> 3 : 8;
  if (n == 0) {
    *value = 0;
    return 0;
  }
  uint64_t d = x << (8 * (8 - n));
  d = d * 10 + (d >> 8);
  d = (((d & 0x000000FF000000FFull) * 0x000F424000000064ull) +
       (((d >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
  *value = d;
  return n;
}

}  // namespace

std::optional<PrintedNumber> ParsePrintedNumber(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  const std::string_view rest = text.substr(i);
  const char lead = rest.empty() ? '\0' : static_cast<char>(rest[0] | 0x20);
  if (lead == 'n' || lead == 'i') {
    for (std::string_view word : {std::string_view("nan"), std::string_view("infinity"), std::string_view("inf")}) {
      if (StartsWithNoCase(rest, word) && (rest.size() == word.size() || !IsWordChar(rest[word.size()]))) {
        PrintedNumber n;
        n.value = word == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                : (negative ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
        n.decimals = kExact;
        n.length = i + word.size();
        return n;
      }
    }
    return std::nullopt;
  }

  // One scan: the digits are accumulated for the fast path; the text is copied (without
  // thousands separators) only when the full parser is needed.
  // The mantissa is exact while it stays at most 2^53 (leading zeros add nothing); past that
  // it stops growing and `inexact` sends the number to the full parser (the fast path needs
  // an exact mantissa of at most 2^53; more than 19 significant digits always exceed it).
  uint64_t mantissa = 0;
  bool inexact = false;
  auto accumulate = [&](char c) {
    if (mantissa <= kMaxExactMantissa) {
      mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
    } else {
      inexact = true;
    }
  };
  const size_t int_start = i;
  bool separators = false;
  while (i < text.size()) {
    const char c = text[i];
    if (IsDigit(c)) {
      accumulate(c);
      ++i;
    } else if (c == ',' && i > int_start && ThousandsSeparatorAt(text, i)) {
      separators = true;
      ++i;
    } else {
      break;
    }
  }
  const size_t int_end = i;
  const bool has_int_digits = int_end > int_start;
  int fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    size_t j = i + 1;
    bool stopped = false;  // a non-digit was met by the 8-byte steps
    while (!stopped && text.size() - j >= 8) {
      uint64_t chunk = 0;
      const int n = LeadingDigits8(text.data() + j, &chunk);
      if (!inexact) {
        // Exact while at most 2^53, as digit by digit: the prefixes only grow.
        const unsigned __int128 next = static_cast<unsigned __int128>(mantissa) * kPow10[n] + chunk;
        if (next <= kMaxExactMantissa) {
          mantissa = static_cast<uint64_t>(next);
        } else {
          inexact = true;
        }
      }
      j += static_cast<size_t>(n);
      stopped = n < 8;
    }
    if (!stopped) {
      while (j < text.size() && IsDigit(text[j])) accumulate(text[j++]);
    }
    fraction_digits = static_cast<int>(j - i - 1);
    if (fraction_digits > 0 || has_int_digits) i = j;
  }
  if (!has_int_digits && fraction_digits == 0) return std::nullopt;
  int exponent = 0;
  const size_t mantissa_end = i;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    const bool exp_negative = j < text.size() && text[j] == '-';
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t exp_digits_start = j;
    int value = 0;
    for (; j < text.size() && IsDigit(text[j]); ++j) {
      if (j - exp_digits_start < 5) value = value * 10 + (text[j] - '0');
    }
    if (j > exp_digits_start && j - exp_digits_start <= 5) {
      exponent = exp_negative ? -value : value;
      i = j;
    }
  }
  PrintedNumber n;
  if (auto fast = inexact ? std::nullopt : FastPath(mantissa, exponent - fraction_digits, negative)) {
    n.value = *fast;
  } else {
    std::string buffer;
    if (negative) buffer += '-';
    for (size_t k = int_start; k < mantissa_end; ++k) {
      if (!separators || text[k] != ',') buffer += text[k];
    }
    if (i > mantissa_end) buffer += 'e' + std::to_string(exponent);
    auto [ptr, ec] = std::from_chars(buffer.data(), buffer.data() + buffer.size(), n.value);
    if (ec != std::errc() && ec != std::errc::result_out_of_range) return std::nullopt;
  }
  n.decimals = static_cast<Decimals>(fraction_digits - exponent);
  n.length = i;
  return n;
}

std::optional<int64_t> ParsePrintedInteger(std::string_view text, size_t* length) {
  size_t i = 0;
  int64_t value = 0;
  bool any = false;
  // Eight bytes at a time while the value stays far below the overflow check (which the
  // digit loop below then makes exactly as before).
  while (text.size() - i >= 8) {
    uint64_t chunk = 0;
    const int n = LeadingDigits8(text.data() + i, &chunk);
    const unsigned __int128 next = static_cast<unsigned __int128>(value) * kPow10[n] + chunk;
    if (n == 0 || next >= 100000000000000000ull) break;
    value = static_cast<int64_t>(next);
    any = true;
    i += static_cast<size_t>(n);
    if (n < 8) break;
  }
  while (i < text.size()) {
    const char c = text[i];
    if (IsDigit(c)) {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
      value = value * 10 + (c - '0');
      any = true;
      ++i;
    } else if (c == ',' && any && ThousandsSeparatorAt(text, i)) {
      ++i;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  if (length) *length = i;
  return value;
}

}  // namespace parity::logs
