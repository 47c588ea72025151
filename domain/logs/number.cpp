#include "domain/logs/number.h"

#include <charconv>
#include <cmath>
#include <limits>

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

}  // namespace

std::optional<PrintedNumber> ParsePrintedNumber(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    negative = text[i] == '-';
    ++i;
  }
  const std::string_view rest = text.substr(i);
  for (std::string_view word : {std::string_view("nan"), std::string_view("infinity"),
                                std::string_view("inf")}) {
    if (StartsWithNoCase(rest, word) &&
        (rest.size() == word.size() || !IsWordChar(rest[word.size()]))) {
      PrintedNumber n;
      n.value = word == "nan" ? std::numeric_limits<double>::quiet_NaN()
                              : (negative ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
      n.decimals = kExact;
      n.length = i + word.size();
      return n;
    }
  }

  // Integer part, possibly with thousands separators.
  char buffer[128];
  size_t out = 0;
  if (negative) buffer[out++] = '-';
  const size_t int_start = i;
  while (i < text.size() && out < sizeof(buffer) - 8) {
    const char c = text[i];
    if (IsDigit(c)) {
      buffer[out++] = c;
      ++i;
    } else if (c == ',' && i > int_start && ThousandsSeparatorAt(text, i)) {
      ++i;
    } else {
      break;
    }
  }
  const bool has_int_digits = i > int_start;
  int fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    size_t j = i + 1;
    while (j < text.size() && IsDigit(text[j]) && out < sizeof(buffer) - 8) ++j;
    fraction_digits = static_cast<int>(j - i - 1);
    if (fraction_digits > 0 || has_int_digits) {
      for (size_t k = i; k < j; ++k) buffer[out++] = text[k];
      i = j;
    }
  }
  if (!has_int_digits && fraction_digits == 0) return std::nullopt;
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t exp_digits_start = j;
    while (j < text.size() && IsDigit(text[j])) ++j;
    if (j > exp_digits_start && j - exp_digits_start < 6) {
      std::from_chars(text.data() + (text[i + 1] == '+' ? i + 2 : i + 1), text.data() + j, exponent);
      for (size_t k = i; k < j; ++k) buffer[out++] = text[k];
      i = j;
    }
  }
  PrintedNumber n;
  auto [ptr, ec] = std::from_chars(buffer, buffer + out, n.value);
  if (ec != std::errc() && ec != std::errc::result_out_of_range) return std::nullopt;
  n.decimals = static_cast<Decimals>(fraction_digits - exponent);
  n.length = i;
  return n;
}

std::optional<int64_t> ParsePrintedInteger(std::string_view text, size_t* length) {
  size_t i = 0;
  int64_t value = 0;
  bool any = false;
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
