#include "domain/msprobe/pyrepr.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace parity::msprobe {

size_t PyFloatReprInto(double value, char (&out)[kPyFloatReprMax]) {
  auto put = [&out](std::string_view text) {
    std::memcpy(out, text.data(), text.size());
    return text.size();
  };
  if (std::isnan(value)) return put("nan");
  if (std::isinf(value)) return put(value > 0 ? "inf" : "-inf");
  if (value == 0) return put(std::signbit(value) ? "-0.0" : "0.0");

  // Shortest round-trip digits in scientific form: "-d.dddde±XX".
  char sci[40];
  auto [sci_end, ec] = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
  const char* p = sci;
  bool negative = *p == '-';
  if (negative) ++p;
  char digits[24];
  size_t ndigits = 0;
  while (p < sci_end && *p != 'e') {
    if (*p != '.') digits[ndigits++] = *p;
    ++p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), sci_end, exponent);

  size_t n = 0;
  if (negative) out[n++] = '-';
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out[n++] = '0';
      out[n++] = '.';
      for (int i = 0; i < -exponent - 1; ++i) out[n++] = '0';
      std::memcpy(out + n, digits, ndigits);
      n += ndigits;
    } else {
      size_t int_len = static_cast<size_t>(exponent) + 1;
      if (ndigits <= int_len) {
        std::memcpy(out + n, digits, ndigits);
        n += ndigits;
        for (size_t i = ndigits; i < int_len; ++i) out[n++] = '0';
        out[n++] = '.';
        out[n++] = '0';
      } else {
        std::memcpy(out + n, digits, int_len);
        n += int_len;
        out[n++] = '.';
        std::memcpy(out + n, digits + int_len, ndigits - int_len);
        n += ndigits - int_len;
      }
    }
    return n;
  }
  out[n++] = digits[0];
  if (ndigits > 1) {
    out[n++] = '.';
    std::memcpy(out + n, digits + 1, ndigits - 1);
    n += ndigits - 1;
  }
  out[n++] = 'e';
  out[n++] = exponent < 0 ? '-' : '+';
  int magnitude = std::abs(exponent);  // at least two digits, as Python prints them
  if (magnitude >= 100) out[n++] = static_cast<char>('0' + magnitude / 100);
  out[n++] = static_cast<char>('0' + magnitude / 10 % 10);
  out[n++] = static_cast<char>('0' + magnitude % 10);
  return n;
}

std::string PyFloatRepr(double value) {
  char buf[kPyFloatReprMax];
  return std::string(buf, PyFloatReprInto(value, buf));
}

std::string PyStrRepr(std::string_view text) {
  bool has_single = text.find('\'') != std::string_view::npos;
  bool has_double = text.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c == static_cast<unsigned char>(quote)) {
          out += '\\';
          out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", c);
          out += hex;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += quote;
  return out;
}

std::optional<double> PyParseFloat(std::string_view text) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  std::string lower;
  bool letters = false;
  for (char c : text) letters |= std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E';
  if (letters) {
    for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::string_view body = letters ? std::string_view(lower) : text;
  double sign = 1;
  if (body.front() == '+' || body.front() == '-') {
    if (body.front() == '-') sign = -1;
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity") return sign * INFINITY;
  if (body == "nan") return NAN;
  for (char c : body) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
      return std::nullopt;
    }
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ec != std::errc() || ptr != body.data() + body.size()) return std::nullopt;
  return sign * value;
}

std::optional<double> PandasToNumeric(std::string_view text) {
  // Powers of ten as correctly rounded literals ("1e22" parsed exactly once).
  static const std::vector<double> kPow10 = [] {
    std::vector<double> table(309);
    for (int k = 0; k <= 308; ++k) {
      std::string literal = "1e" + std::to_string(k);
      std::from_chars(literal.data(), literal.data() + literal.size(), table[k]);
    }
    return table;
  }();
  constexpr int kMaxDigits = 17;  // pandas keeps 17 digits, leading zeros included
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  while (i < text.size() && space(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  // pandas accumulates number * 10 + digit in a double. While the sum stays below 2^53
  // (15 digits) every step is exact, so those steps run on an integer (one cycle each
  // instead of a dependent multiply and add); the 16th and 17th digits round as pandas does.
  constexpr int kExactDigits = 15;
  uint64_t exact = 0;
  double number = 0;
  int digits = 0, decimals = 0, exponent = 0;
  auto add_digit = [&](char c) {
    if (digits < kExactDigits) {
      exact = exact * 10 + static_cast<uint64_t>(c - '0');
    } else {
      if (digits == kExactDigits) number = static_cast<double>(exact);
      number = number * 10. + (c - '0');
    }
    ++digits;
  };
  while (i < text.size() && digit(text[i])) {
    if (digits < kMaxDigits) add_digit(text[i]);
    else ++exponent;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && digit(text[i]) && digits < kMaxDigits) {
      add_digit(text[i++]);
      ++decimals;
    }
    while (i < text.size() && digit(text[i])) ++i;  // digits beyond the 17th are dropped
    exponent -= decimals;
  }
  if (digits == 0) return std::nullopt;
  if (digits <= kExactDigits) number = static_cast<double>(exact);
  if (negative) number = -number;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t mark = i++;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    int value = 0, exp_digits = 0;
    while (i < text.size() && digit(text[i]) && exp_digits < kMaxDigits) {
      value = value * 10 + (text[i++] - '0');
      ++exp_digits;
    }
    if (exp_digits == 0) i = mark;
    exponent += exp_negative ? -value : value;
  }
  while (i < text.size() && space(text[i])) ++i;
  if (i != text.size()) return std::nullopt;
  if (exponent > 308) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exponent > 0) {
    number *= kPow10[exponent];
  } else if (exponent < -308) {
    if (exponent < -616) {
      number = 0.;
    } else {
      number /= kPow10[-308 - exponent];
      number /= kPow10[308];
    }
  } else {
    number /= kPow10[-exponent];
  }
  return number;
}

}  // namespace parity::msprobe
