#include "domain/logs/line_formats.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "domain/logs/number.h"

namespace parity::logs {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsIdent(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (IsSpace(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

size_t SkipSpaces(std::string_view s, size_t i) {
  while (i < s.size() && IsSpace(s[i])) ++i;
  return i;
}

void AddMetric(MetricLine& out, std::string_view name, const PrintedNumber& n) {
  out.metrics.push_back({name, n.value, n.decimals});
}

struct KeyName {
  std::string_view key;
  std::string_view name;
};

// Megatron's keys and the names parity reports them under. Keys not listed keep their own
// name (e.g. PanGu's "mtp head 0 lm loss", "mtp_1 loss"), so nothing printed is lost.
constexpr std::array<KeyName, 14> kMegatronKeys = {{
    {"lm loss", "loss"},
    {"grad norm", "grad_norm"},
    {"learning rate", "lr"},
    {"loss scale", "loss_scale"},
    {"params norm", "params_norm"},
    {"num zeros", "num_zeros"},
    {"elapsed time per iteration (ms)", "elapsed_ms"},
    {"throughput per GPU (TFLOP/s/GPU)", "tflops"},
    {"TFLOPs", "tflops"},
    {"global batch size", "global_batch_size"},
    {"consumed samples", "consumed_samples"},
    {"number of skipped iterations", "skipped_iterations"},
    {"number of nan iterations", "nan_iterations"},
    {"samples per second", "samples_per_second"},
}};

// Each wanted key looked up as "| <key>:" (for more than 64 wanted names).
bool ReadMegatronFieldsBySearch(std::string_view line, size_t from, const MetricFilter& filter, MetricLine& out) {
  for (const FieldKey& k : MegatronFieldKeys(*filter.names)) {
    std::string needle = "| " + std::string(k.key) + ":";
    if (from >= line.size()) return true;
    const void* hit = memmem(line.data() + from, line.size() - from, needle.data(), needle.size());
    if (!hit) continue;
    const size_t at = static_cast<const char*>(hit) - line.data();
    if (auto number = ParsePrintedNumber(line.substr(SkipSpaces(line, at + needle.size())))) {
      AddMetric(out, k.name, *number);
    }
  }
  return true;
}

// The wanted fields only, in one walk over the " | key: value" fields: each field's key is
// compared with the few wanted keys, and the walk stops once every wanted metric is read.
// This is what makes 2-million-line Megatron logs cheap (no search per wanted key).
bool ReadMegatronFields(std::string_view line, size_t from, const MetricFilter& filter, MetricLine& out) {
  std::vector<FieldKey> local;
  const std::vector<FieldKey>* keys = filter.megatron_keys;
  if (!keys) {
    local = MegatronFieldKeys(*filter.names);
    keys = &local;
  }
  const size_t slots = filter.names->size();
  if (slots == 0 || slots > 64) return ReadMegatronFieldsBySearch(line, from, filter, out);
  uint64_t done = 0;
  size_t left = slots;
  // First where each key was on the previous line, give or take the width of the values
  // printed before it: one short scan instead of a walk over every field.
  constexpr size_t kDrift = 32;
  for (const FieldKey& k : *keys) {
    if (!k.only_key || k.last_at == std::string_view::npos || (done >> k.slot & 1)) continue;
    const size_t n = k.key.size();
    const size_t lo = k.last_at > from + kDrift ? k.last_at - kDrift : from;
    const size_t hi = std::min(line.size(), k.last_at + kDrift);
    for (size_t p = lo; p < hi; ++p) {
      // The key's first byte by memchr: a few calls instead of a test at every position.
      const void* first = std::memchr(line.data() + p, k.key[0], hi - p);
      if (!first) break;
      p = static_cast<const char*>(first) - line.data();
      if (p + n >= line.size() || line[p + n] != ':' || std::memcmp(line.data() + p, k.key.data(), n) != 0) {
        continue;
      }
      size_t b = p;
      while (b > from && line[b - 1] == ' ') --b;
      if (b == from || line[b - 1] != '|') continue;  // a whole field: "| key:"
      if (auto number = ParsePrintedNumber(line.substr(SkipSpaces(line, p + n + 1)))) AddMetric(out, k.name, *number);
      k.last_at = p;
      done |= uint64_t{1} << k.slot;
      --left;
      break;
    }
  }
  size_t i = from;
  while (left > 0 && i < line.size()) {
    const void* bar = std::memchr(line.data() + i, '|', line.size() - i);
    if (!bar) break;
    const size_t key_at = SkipSpaces(line, static_cast<const char*>(bar) - line.data() + 1);
    i = key_at;
    const std::string_view rest = line.substr(key_at);
    for (const FieldKey& k : *keys) {
      const size_t n = k.key.size();
      if (rest.size() <= n || rest[n] != ':' || rest[0] != k.key[0] || (done >> k.slot & 1) ||
          std::memcmp(rest.data(), k.key.data(), n) != 0) {
        continue;
      }
      const size_t value_at = SkipSpaces(line, key_at + n + 1);
      if (auto number = ParsePrintedNumber(line.substr(value_at))) {
        AddMetric(out, k.name, *number);
        i = value_at + number->length;
      }
      k.last_at = key_at;
      done |= uint64_t{1} << k.slot;  // a name is read once: its first key on the line
      --left;
      break;
    }
  }
  return true;
}

}  // namespace

std::vector<FieldKey> MegatronFieldKeys(const std::vector<std::string>& names) {
  std::vector<FieldKey> out;
  for (size_t slot = 0; slot < names.size(); ++slot) {
    const std::string& name = names[slot];
    bool known = false;
    for (const auto& k : kMegatronKeys) {
      if (k.name != name) continue;
      known = true;
      out.push_back({k.key, k.name, slot});
    }
    if (!known && !name.empty()) out.push_back({name, name, slot});
  }
  for (FieldKey& k : out) {
    k.only_key = std::count_if(out.begin(), out.end(), [&](const FieldKey& o) { return o.slot == k.slot; }) == 1;
  }
  return out;
}

void StripAnsi(std::string_view line, std::string& out) {
  out.clear();
  size_t i = 0;
  while (i < line.size()) {
    const void* esc = std::memchr(line.data() + i, 0x1b, line.size() - i);
    const size_t stop = esc ? static_cast<const char*>(esc) - line.data() : line.size();
    out.append(line.data() + i, stop - i);
    i = stop;
    if (i >= line.size()) break;
    // ESC '[' parameter bytes 0x30-0x3F, intermediate bytes 0x20-0x2F, final byte 0x40-0x7E.
    size_t j = i + 1;
    if (j < line.size() && line[j] == '[') {
      ++j;
      while (j < line.size() && line[j] >= 0x30 && line[j] <= 0x3F) ++j;
      while (j < line.size() && line[j] >= 0x20 && line[j] <= 0x2F) ++j;
      if (j < line.size() && line[j] >= 0x40 && line[j] <= 0x7E) ++j;
    }
    i = j;
  }
  if (!out.empty() && out.back() == '\r') out.pop_back();
}

RankPrefix SplitRankPrefix(std::string_view line) {
  RankPrefix r{std::nullopt, line};
  if (line.size() < 4 || line[0] != '[') return r;
  size_t i = 1;
  while (i < line.size() && ((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= 'A' && line[i] <= 'Z'))) ++i;
  if (i == 1) return r;
  const size_t digits = i;
  int rank = 0;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9' && i - digits < 7) {
    rank = rank * 10 + (line[i] - '0');
    ++i;
  }
  if (i == digits || i + 1 >= line.size() || line[i] != ']' || line[i + 1] != ':') return r;
  r.rank = rank;
  r.rest = line.substr(i + 2);
  return r;
}

bool ReadTorchtitanLine(std::string_view line, size_t step_at, const MetricFilter& filter, MetricLine& out) {
  // "validate step:" lines report validation, and "elapsed_time_per_step:" is not a step.
  if (step_at > 0 && IsIdent(line[step_at - 1])) return false;
  if (step_at >= 9 && line.substr(step_at - 9, 9) == "validate ") return false;
  size_t i = SkipSpaces(line, step_at + 5);
  size_t len = 0;
  auto step = ParsePrintedInteger(line.substr(i), &len);
  if (!step) return false;
  out.step = *step;
  i += len;
  out.npu_variant = line.find("elapsed_time_per_step:", i) != std::string_view::npos;
  // The rest is "key: value" pairs separated by spaces; values may carry units.
  while (i < line.size()) {
    const size_t colon = line.find(':', i);
    if (colon == std::string_view::npos) break;
    size_t key_start = colon;
    while (key_start > i && IsIdent(line[key_start - 1])) --key_start;
    const std::string_view key = line.substr(key_start, colon - key_start);
    if (key == "loss") out.has_loss = true;
    const bool wanted = key == "memory" ? filter.Wants("memory_gib") || filter.Wants("memory_pct")
                                        : filter.Wants(key);
    if (!wanted) {
      i = colon + 1;
      continue;
    }
    size_t v = SkipSpaces(line, colon + 1);
    auto number = ParsePrintedNumber(line.substr(v));
    if (key.empty() || !number) {
      // "mfu: N/A" (torchtitan with FP8/MX quantization): the metric has no value at this
      // step, which is not the same as a log that never prints it.
      if (!key.empty() && line.substr(v, 3) == "N/A") out.not_available.push_back(key);
      i = colon + 1;
      continue;
    }
    size_t after = v + number->length;
    if (key == "memory") {
      AddMetric(out, "memory_gib", *number);
      // "9.46GiB(64.99%)": the share of device memory follows in parentheses.
      const size_t paren = line.find('(', after);
      if (paren != std::string_view::npos && paren < after + 5) {
        if (auto pct = ParsePrintedNumber(line.substr(paren + 1))) {
          AddMetric(out, "memory_pct", *pct);
          after = paren + 1 + pct->length;
        }
      }
    } else if (key == "elapsed_time_per_step") {
      AddMetric(out, key, *number);
    } else {
      AddMetric(out, key, *number);
    }
    i = after;
  }
  return true;
}

bool ReadMegatronLine(std::string_view line, const MetricFilter& filter, MetricLine& out) {
  const size_t it = line.find("iteration");
  if (it == std::string_view::npos) return false;
  // " validation loss at iteration N | lm loss value: ..." reports evaluation, not training.
  constexpr std::string_view kValidation = "validation loss at";
  const std::string_view before = TrimSpaces(line.substr(0, it));
  if (before.size() >= kValidation.size() && before.substr(before.size() - kValidation.size()) == kValidation) {
    return false;
  }
  size_t i = SkipSpaces(line, it + 9);
  size_t len = 0;
  auto iteration = ParsePrintedInteger(line.substr(i), &len);
  if (!iteration) return false;
  out.step = *iteration;
  i = SkipSpaces(line, i + len);
  if (i < line.size() && line[i] == '/') {
    i = SkipSpaces(line, i + 1);
    if (auto total = ParsePrintedInteger(line.substr(i), &len)) {
      out.total_steps = *total;
      i += len;
    }
  }
  if (!filter.all) return ReadMegatronFields(line, i, filter, out);
  // Fields " key: value |".
  while (i < line.size()) {
    const size_t bar = line.find('|', i);
    const size_t field_end = bar == std::string_view::npos ? line.size() : bar;
    const std::string_view field = TrimSpaces(line.substr(i, field_end - i));
    i = field_end + 1;
    const size_t colon = field.rfind(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = TrimSpaces(field.substr(0, colon));
    if (key.empty()) continue;
    std::string_view name = key;
    for (const auto& k : kMegatronKeys) {
      if (k.key == key) {
        name = k.name;
        break;
      }
    }
    if (name == "loss") out.has_loss = true;
    if (!filter.Wants(name)) continue;
    auto number = ParsePrintedNumber(TrimSpaces(field.substr(colon + 1)));
    if (!number) continue;
    AddMetric(out, name, *number);
  }
  return true;
}

bool ReadDeepSpeedLine(std::string_view line, size_t step_at, const MetricFilter& filter, MetricLine& out) {
  if (step_at > 0 && IsIdent(line[step_at - 1])) return false;
  size_t len = 0;
  auto step = ParsePrintedInteger(line.substr(step_at + 5), &len);
  if (!step) return false;
  out.step = *step;
  const size_t skipped = line.find("skipped=", step_at);
  if (skipped != std::string_view::npos && filter.Wants("ds_skipped")) {
    if (auto n = ParsePrintedNumber(line.substr(skipped + 8))) AddMetric(out, "ds_skipped", *n);
  }
  const size_t lr = line.find("lr=", step_at);
  if (lr != std::string_view::npos && filter.Wants("ds_lr")) {
    size_t v = lr + 3;
    if (v < line.size() && line[v] == '[') ++v;
    if (auto n = ParsePrintedNumber(line.substr(v))) {
      PrintedNumber exact = *n;
      exact.decimals = kExact;  // Python repr of a float: the value in full
      AddMetric(out, "ds_lr", exact);
    }
  }
  return true;
}

bool ReadHfTrainerLine(std::string_view line, size_t brace_at, const MetricFilter& filter, MetricLine& out) {
  // A Python dict repr: {'key': value, ...}. Training logs carry 'loss'; eval and summary
  // dicts ('eval_loss', 'train_loss') do not and are skipped.
  const size_t close = line.find('}', brace_at);
  const std::string_view dict = line.substr(brace_at + 1, close == std::string_view::npos
                                                              ? std::string_view::npos
                                                              : close - brace_at - 1);
  bool has_loss = false;
  size_t i = 0;
  while (i < dict.size()) {
    const size_t q1 = dict.find('\'', i);
    if (q1 == std::string_view::npos) break;
    const size_t q2 = dict.find('\'', q1 + 1);
    if (q2 == std::string_view::npos) break;
    const std::string_view key = dict.substr(q1 + 1, q2 - q1 - 1);
    size_t v = q2 + 1;
    if (v >= dict.size() || dict[v] != ':') {
      i = q2 + 1;
      continue;
    }
    v = SkipSpaces(dict, v + 1);
    const bool quoted = v < dict.size() && (dict[v] == '\'' || dict[v] == '"');
    if (quoted) ++v;
    auto number = ParsePrintedNumber(dict.substr(v));
    const size_t next = dict.find(',', v);
    i = next == std::string_view::npos ? dict.size() : next + 1;
    if (!number) continue;
    if (key == "loss") {
      has_loss = true;
      out.has_loss = true;
      if (filter.Wants("loss")) AddMetric(out, "loss", *number);  // round(..., 4): printed decimals
    } else if (key == "step") {
      out.step = static_cast<int64_t>(number->value);
    } else {
      PrintedNumber n = *number;
      // grad_norm and learning_rate are printed unrounded (repr), i.e. in full.
      if ((key == "grad_norm" || key == "learning_rate") && !quoted) n.decimals = kExact;
      const std::string_view name = key == "learning_rate" ? std::string_view("lr") : key;
      if (filter.Wants(name)) AddMetric(out, name, n);
    }
  }
  // The dict itself carries no step; the progress bar drawn just before it shows the
  // global step it was logged at.
  if (has_loss && !out.step) out.step = ProgressBarStep(line, brace_at);
  return has_loss;
}

std::optional<int64_t> ProgressBarStep(std::string_view line, size_t end) {
  const std::string_view before = line.substr(0, end);
  const size_t a = before.rfind("it/s]"), b = before.rfind("s/it]");
  size_t close = a == std::string_view::npos ? b : (b == std::string_view::npos ? a : std::max(a, b));
  if (close == std::string_view::npos) return std::nullopt;
  const size_t open = before.rfind('[', close);
  if (open == std::string_view::npos) return std::nullopt;
  const size_t bar = before.rfind("| ", open);
  if (bar == std::string_view::npos) return std::nullopt;
  size_t len = 0;
  const size_t at = SkipSpaces(before, bar + 2);
  auto n = ParsePrintedInteger(before.substr(at), &len);
  if (!n || at + len >= before.size() || before[at + len] != '/') return std::nullopt;
  return n;
}

bool ReadKeywordValue(std::string_view line, std::string_view keyword, LineMetric& out) {
  size_t at = line.find(keyword);
  while (at != std::string_view::npos) {
    size_t i = SkipSpaces(line, at + keyword.size());
    if (i < line.size() && (line[i] == ':' || line[i] == '=')) i = SkipSpaces(line, i + 1);
    if (auto n = ParsePrintedNumber(line.substr(i))) {
      out.name = keyword;
      out.value = n->value;
      out.decimals = n->decimals;
      return true;
    }
    at = line.find(keyword, at + 1);
  }
  return false;
}

std::optional<int64_t> FindStepNumber(std::string_view line) {
  for (std::string_view word : {std::string_view("iteration"), std::string_view("step")}) {
    size_t at = line.find(word);
    while (at != std::string_view::npos) {
      if (at == 0 || !IsIdent(line[at - 1])) {
        size_t i = SkipSpaces(line, at + word.size());
        if (i < line.size() && (line[i] == ':' || line[i] == '=')) i = SkipSpaces(line, i + 1);
        if (auto n = ParsePrintedInteger(line.substr(i))) return n;
      }
      at = line.find(word, at + 1);
    }
  }
  return std::nullopt;
}

}  // namespace parity::logs
