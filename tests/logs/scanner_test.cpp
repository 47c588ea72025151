// The needle scanner and the number reader: the two primitives under every format.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "domain/logs/line_formats.h"
#include "domain/logs/needle_scanner.h"
#include "domain/logs/number.h"

namespace parity::logs {
namespace {

std::vector<std::pair<size_t, int>> AllHits(const NeedleScanner& s, const std::string& text) {
  std::vector<std::pair<size_t, int>> hits;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* from = begin;
  const char* at;
  int id;
  while (s.Next(begin, from, end, &at, &id)) {
    hits.push_back({static_cast<size_t>(at - begin), id});
    from = at + 1;
  }
  return hits;
}

// The same search done naively, to check the vector path against.
std::vector<std::pair<size_t, int>> NaiveHits(const std::vector<std::string>& needles, const std::string& text) {
  std::vector<std::pair<size_t, int>> hits;
  for (size_t i = 0; i < text.size(); ++i) {
    for (size_t n = 0; n < needles.size(); ++n) {
      if (text.compare(i, needles[n].size(), needles[n]) == 0) {
        hits.push_back({i, static_cast<int>(n)});
        break;
      }
    }
  }
  return hits;
}

TEST(NeedleScanner, MatchesNaiveSearchAtEveryAlignment) {
  const std::vector<std::string> needles = {"step:", "ERR", "Traceback (most recent call last)", "9999",
                                            std::string(1, '\0'), "training success"};
  std::vector<NeedleScanner::Needle> spec;
  for (size_t i = 0; i < needles.size(); ++i) spec.push_back({needles[i], static_cast<int>(i), -1});
  const NeedleScanner scanner(spec);
  std::string text;
  unsigned seed = 12345;
  const char* pieces[] = {"step:", "ERR", "Traceback (most recent call last)", "99", "9999", "st", "ep:",
                          "training success", "training", " ", "\n", "abc", ""};
  for (int i = 0; i < 4000; ++i) {
    seed = seed * 1103515245 + 12345;
    const char* piece = pieces[(seed >> 16) % 13];
    if ((seed >> 16) % 13 == 12) text.push_back('\0');
    else text += piece;
  }
  for (size_t shift = 0; shift < 40; ++shift) {
    const std::string t = text.substr(shift);
    EXPECT_EQ(AllHits(scanner, t), NaiveHits(needles, t)) << "shift " << shift;
  }
}

TEST(NeedleScanner, NeedleAtTheVeryEndAndStart) {
  const NeedleScanner scanner({{"step:", 1, 3}, {"Killed", 2, -1}});
  EXPECT_EQ(AllHits(scanner, "step:"), (std::vector<std::pair<size_t, int>>{{0, 1}}));
  EXPECT_EQ(AllHits(scanner, std::string(100, 'x') + "Killed"),
            (std::vector<std::pair<size_t, int>>{{100, 2}}));
  EXPECT_TRUE(AllHits(scanner, std::string(100, 'x') + "Kille").empty());
}

// Line counting is the line numbers of every error and the file's line count: exact at every
// length and alignment, and past the 8-bit lane counters' wrap (255 blocks of 32 bytes).
TEST(CountByte, ExactAtEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::string text(40000, 'x');
  for (auto& c : text) c = rng() % 5 == 0 ? '\n' : 'a';
  for (size_t offset : {0u, 1u, 7u, 31u}) {
    for (size_t length : {0u, 1u, 31u, 32u, 33u, 127u, 128u, 129u, 8160u, 8191u, 8192u, 8193u, 33000u, 39000u}) {
      const char* p = text.data() + offset;
      const size_t expected = static_cast<size_t>(std::count(p, p + length, '\n'));
      ASSERT_EQ(CountByte(p, p + length, '\n'), expected) << "offset " << offset << " length " << length;
    }
  }
  const std::string all_newlines(100000, '\n');
  EXPECT_EQ(CountByte(all_newlines.data(), all_newlines.data() + all_newlines.size(), '\n'), 100000u);
}

// The line facts the parser trusts instead of searching each line again: the line end and
// whether a NUL lies before it exactly, and "no ESC" only when true, against a plain search,
// at every position of the special bytes relative to the 32-byte blocks, with the next
// line's bytes in the same block.
TEST(ScanLine, MatchesPlainSearchAtEveryLengthAndAlignment) {
  int known_esc_free = 0;
  for (size_t line_length : {0u, 1u, 5u, 31u, 32u, 33u, 63u, 64u, 65u, 200u, 447u}) {
    for (size_t offset : {0u, 1u, 17u, 31u}) {
      for (int special : {-1, 0, 0x1b}) {
        for (size_t where = 0; where <= line_length + 40; where += (line_length < 70 ? 1 : 13)) {
          std::string text(offset, '\n');
          std::string line(line_length, 'a');
          std::string after(80, 'b');
          if (special >= 0) {
            if (where < line_length) line[where] = static_cast<char>(special);
            else if (where - line_length < after.size()) after[where - line_length] = static_cast<char>(special);
          }
          text += line;
          const bool with_end = line_length % 2 == 0;  // odd lengths run to the buffer's end
          if (with_end) text += '\n' + after;
          const char* p = text.data() + offset;
          const char* end = text.data() + text.size();
          const LineFacts facts = ScanLine(p, end);
          const char* expected_end = with_end ? p + line_length : end;
          ASSERT_EQ(facts.end, expected_end) << line_length << " " << offset << " " << where;
          const std::string_view seen(p, static_cast<size_t>(expected_end - p));
          ASSERT_EQ(facts.has_nul, seen.find('\0') != std::string_view::npos) << line_length << " " << where;
          if (facts.esc_free) {
            ASSERT_EQ(seen.find('\x1b'), std::string_view::npos) << line_length << " " << where;
            ++known_esc_free;
          }
        }
      }
    }
  }
  // Clean lines are recognised as such (where the vector path runs; the portable one never says so).
  if (__builtin_cpu_supports("avx2")) EXPECT_GT(known_esc_free, 1000);
}

// ParsePrintedInteger reads eight digits at a time: the same answer (value, length, or none)
// as a digit-by-digit reading at every digit count, with thousands separators, other stops,
// the overflow limit, and the text ending anywhere.
std::optional<int64_t> IntegerDigitByDigit(std::string_view text, size_t* length) {
  size_t i = 0;
  int64_t value = 0;
  bool any = false;
  auto digit = [&](size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  while (i < text.size()) {
    if (digit(i)) {
      if (value > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
      value = value * 10 + (text[i] - '0');
      any = true;
      ++i;
    } else if (text[i] == ',' && any && digit(i + 1) && digit(i + 2) && digit(i + 3) && !digit(i + 4)) {
      i += 1;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  *length = i;
  return value;
}

TEST(PrintedNumber, IntegersEightDigitsAtATime) {
  std::mt19937 rng(11);
  const char* stops[] = {"", " ", "/ 3000000 |", ",", ",123 |", ",1234", "x", ".5", "\xff", ":"};
  for (int k = 0; k < 50000; ++k) {
    std::string text;
    const int digits = static_cast<int>(rng() % 23);
    for (int d = 0; d < digits; ++d) text += static_cast<char>('0' + rng() % 10);
    if (rng() % 4 == 0 && digits > 0) text += ",456";
    text += stops[rng() % (sizeof stops / sizeof stops[0])];
    size_t got_length = 0, want_length = 0;
    const auto got = ParsePrintedInteger(text, &got_length);
    const auto want = IntegerDigitByDigit(text, &want_length);
    ASSERT_EQ(got.has_value(), want.has_value()) << text;
    if (want) {
      ASSERT_EQ(*got, *want) << text;
      ASSERT_EQ(got_length, want_length) << text;
    }
  }
  size_t length = 0;
  EXPECT_FALSE(ParsePrintedInteger("9223372036854775807", &length));  // the old limit, kept
  EXPECT_EQ(ParsePrintedInteger("922337203685477579", &length), 922337203685477579);
  EXPECT_EQ(ParsePrintedInteger("12345678", &length), 12345678);
  EXPECT_EQ(length, 8u);
}

TEST(PrintedNumber, PythonFormats) {
  auto n = ParsePrintedNumber("3.24405  grad");
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(n->value, 3.24405);
  EXPECT_EQ(n->decimals, 5);
  EXPECT_EQ(n->length, 7u);
  n = ParsePrintedNumber("1.058957E+01 |");
  ASSERT_TRUE(n);
  EXPECT_DOUBLE_EQ(n->value, 10.58957);
  EXPECT_EQ(n->decimals, 5);
  n = ParsePrintedNumber("3.937E-06");
  EXPECT_EQ(n->decimals, 9);
  n = ParsePrintedNumber("7,282  tflops");
  EXPECT_DOUBLE_EQ(n->value, 7282);
  EXPECT_EQ(n->decimals, 0);
  n = ParsePrintedNumber("1,234,567.25");
  EXPECT_DOUBLE_EQ(n->value, 1234567.25);
  n = ParsePrintedNumber("1,2");  // not a thousands separator
  EXPECT_DOUBLE_EQ(n->value, 1);
  n = ParsePrintedNumber("NAN |");
  ASSERT_TRUE(n);
  EXPECT_TRUE(std::isnan(n->value));
  n = ParsePrintedNumber("-inf");
  EXPECT_TRUE(std::isinf(n->value) && n->value < 0);
  EXPECT_FALSE(ParsePrintedNumber("N/A"));
  EXPECT_FALSE(ParsePrintedNumber("information"));
  EXPECT_FALSE(ParsePrintedNumber("."));
}

// The fast path (mantissa below 2^53, |exponent| <= 22) must give exactly the double a full
// parse gives; checked against strtod on the formats trainers print, and on the inputs that
// must take the slow path (long mantissas, large exponents).
TEST(PrintedNumber, SameDoubleAsStrtodOnEveryPrintedForm) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const char* formats[] = {"%.4f", "%.5f", "%8.5f", "%.6E", "%.3E", "%g", "%.17g", "%.12f", "%.1f", "%.20e"};
  char text[128];
  for (int k = 0; k < 20000; ++k) {
    const double magnitude = std::pow(10.0, static_cast<double>(rng() % 40) - 20.0);
    const double v = (unit(rng) - 0.3) * magnitude;
    const char* format = formats[k % (sizeof formats / sizeof formats[0])];
    std::snprintf(text, sizeof text, format, v);
    std::string_view t(text);
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    auto n = ParsePrintedNumber(t);
    ASSERT_TRUE(n) << text;
    const double expected = std::strtod(std::string(t).c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&n->value, &expected, sizeof expected), 0) << text << " read as " << n->value;
    ASSERT_EQ(n->length, t.size()) << text;
  }
  auto big = ParsePrintedNumber("123456789012345678901234567890.5e-3");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->value, std::strtod("123456789012345678901234567890.5e-3", nullptr));
  // Around the fast path's limit (an exact mantissa of at most 2^53), with leading zeros.
  for (const char* edge : {"9007199254740992", "9007199254740993", "90071992547409921", "0.0009007199254740993e5",
                           "000000000000000000000000900719925474099.3", "9007199254740992e22", "9007199254740992e23"}) {
    auto n = ParsePrintedNumber(edge);
    ASSERT_TRUE(n) << edge;
    const double expected = std::strtod(edge, nullptr);
    EXPECT_EQ(std::memcmp(&n->value, &expected, sizeof expected), 0) << edge << " read as " << n->value;
  }
  auto ten_thousand = ParsePrintedNumber("1,234,567.25e+00");
  ASSERT_TRUE(ten_thousand);
  EXPECT_EQ(ten_thousand->value, 1234567.25);
  auto six_digit_exponent = ParsePrintedNumber("1.5e123456");  // not an exponent parse_log accepts
  ASSERT_TRUE(six_digit_exponent);
  EXPECT_EQ(six_digit_exponent->value, 1.5);
  EXPECT_EQ(six_digit_exponent->length, 3u);
  auto negative_zero = ParsePrintedNumber("-0.00000");
  ASSERT_TRUE(negative_zero);
  EXPECT_TRUE(std::signbit(negative_zero->value));
}

TEST(LineFormats, AnsiStrippingAndRankPrefix) {
  std::string out;
  StripAnsi("\x1b[31mstep: 1\x1b[38;2;180;60;0m x\x1b[39m\r", out);
  EXPECT_EQ(out, "step: 1 x");
  auto p = SplitRankPrefix("[default12]:[titan] x");
  EXPECT_EQ(p.rank, 12);
  EXPECT_EQ(p.rest, "[titan] x");
  EXPECT_FALSE(SplitRankPrefix("[titan] 2026").rank);
  EXPECT_FALSE(SplitRankPrefix("[2026-09-11 12:06:52]").rank);
}

}  // namespace
}  // namespace parity::logs
