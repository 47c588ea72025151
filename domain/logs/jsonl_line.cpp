// ReadJsonlLine (declared in line_formats.h): a trainer's own metrics file, one flat JSON
// object per line. Read by hand: one pass, no allocation, names viewing into the line.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "domain/logs/line_formats.h"
#include "domain/logs/number.h"

namespace parity::logs {
namespace {

struct Alias {
  std::string_view key, name;
};
constexpr std::array<Alias, 19> kAliases = {{
    {"loss", "loss"},
    {"train/loss", "loss"},
    {"train_loss", "loss"},
    {"lm loss", "loss"},
    {"lm_loss", "loss"},
    {"grad_norm", "grad_norm"},
    {"grad-norm", "grad_norm"},
    {"gradnorm", "grad_norm"},
    {"grad norm", "grad_norm"},
    {"train/grad_norm", "grad_norm"},
    {"lr", "lr"},
    {"learning_rate", "lr"},
    {"learning-rate", "lr"},
    {"train/learning_rate", "lr"},
    {"step", ""},
    {"iteration", ""},
    {"iter", ""},
    {"global_step", ""},
    {"train/global_step", ""},
}};

size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

// The end of the JSON string starting at s[i] == '"' (just past its closing quote), or npos.
size_t StringEnd(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// The end of a nested array or object starting at s[i], or npos.
size_t NestedEnd(std::string_view s, size_t i) {
  int depth = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '"') {
      i = StringEnd(s, i);
      if (i == std::string_view::npos) return i;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  return std::string_view::npos;
}

int SignificantDigits(std::string_view token) {
  int n = 0;
  bool leading = true;
  for (char c : token) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

bool StartsWith(std::string_view s, size_t i, std::string_view word) {
  return s.size() - i >= word.size() && s.compare(i, word.size(), word) == 0;
}

}  // namespace

bool ReadJsonlLine(std::string_view line, size_t brace_at, const MetricFilter& filter, MetricLine& out) {
  for (size_t k = 0; k < brace_at; ++k) {
    if (line[k] != ' ' && line[k] != '\t') return false;
  }
  bool any_value = false;
  size_t i = SkipWs(line, brace_at + 1);
  while (i < line.size() && line[i] == '"') {
    const size_t key_end = StringEnd(line, i);
    if (key_end == std::string_view::npos) return false;
    const std::string_view key = line.substr(i + 1, key_end - i - 2);
    i = SkipWs(line, key_end);
    if (i >= line.size() || line[i] != ':') return false;
    i = SkipWs(line, i + 1);
    if (i >= line.size()) return false;
    std::string_view name = key;
    bool is_step = false;
    for (const auto& a : kAliases) {
      if (a.key == key) {
        is_step = a.name.empty();
        name = a.name;
        break;
      }
    }
    const char c = line[i];
    if (c == '"') {
      i = StringEnd(line, i);
    } else if (c == '[' || c == '{') {
      i = NestedEnd(line, i);
    } else if (StartsWith(line, i, "null")) {
      if (!is_step && filter.Wants(name)) out.not_available.push_back(name);
      i += 4;
    } else if (StartsWith(line, i, "true") || StartsWith(line, i, "false")) {
      i += line[i] == 't' ? 4 : 5;
    } else {
      PrintedNumber n;
      size_t length = 0;
      if (StartsWith(line, i, "NaN")) {
        n.value = std::numeric_limits<double>::quiet_NaN();
        n.decimals = kExact;
        length = 3;
      } else if (StartsWith(line, i, "Infinity") || StartsWith(line, i, "-Infinity")) {
        n.value = line[i] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
        n.decimals = kExact;
        length = line[i] == '-' ? 9 : 8;
      } else {
        auto parsed = ParsePrintedNumber(line.substr(i));
        if (!parsed) return false;
        n = *parsed;
        length = parsed->length;
        if (SignificantDigits(line.substr(i, length)) >= 15) n.decimals = kExact;
      }
      if (is_step) {
        if (n.value != static_cast<double>(static_cast<int64_t>(n.value))) return false;
        out.step = static_cast<int64_t>(n.value);
      } else {
        any_value = true;
        if (name == "loss") out.has_loss = true;
        if (filter.Wants(name)) out.metrics.push_back({name, n.value, n.decimals});
      }
      i += length;
    }
    if (i == std::string_view::npos) return false;
    i = SkipWs(line, i);
    if (i < line.size() && line[i] == ',') {
      i = SkipWs(line, i + 1);
      continue;
    }
    if (i < line.size() && line[i] == '}') return out.step.has_value() && any_value;
    return false;
  }
  return false;
}

}  // namespace parity::logs
