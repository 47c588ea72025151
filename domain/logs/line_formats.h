// The training-metric lines of each supported trainer, read one (ANSI-stripped) line at a
// time. Each reader returns false for a line that is not one of its training-metric lines
// (a validation line, an eval dict), and otherwise fills a MetricLine. Line shapes are
// documented in docs/tools/parse_log.md with their sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/logs/series.h"

namespace parity::logs {

struct LineMetric {
  // Canonical (loss, grad_norm, lr, ...: static strings) or the log's own key, a view into
  // the line being read: valid until the next line.
  std::string_view name;
  double value = 0;
  Decimals decimals = 0;
};

// A wanted metric as a Megatron line prints it: key "lm loss" for name "loss". `slot` is
// the name's index in the wanted list (a name may have several keys: tflops).
struct FieldKey {
  std::string_view key, name;
  size_t slot = 0;
  bool only_key = true;  // the name has no other key
  // Where the key started on the last line read: Megatron prints the same fields in the same
  // order, so the next line has it within a few bytes (value widths vary). A cache owned by
  // the one parser that prepared the keys.
  mutable size_t last_at = std::string_view::npos;
};
// The keys of `names` (views into a static table or into `names`; unknown names are their
// own key, e.g. PanGu's "mtp head 0 lm loss").
std::vector<FieldKey> MegatronFieldKeys(const std::vector<std::string>& names);

// Which metrics a reader should decode; the others are skipped without parsing their values.
struct MetricFilter {
  bool all = true;
  const std::vector<std::string>* names = nullptr;  // when !all
  // MegatronFieldKeys(*names), prepared once per log rather than once per line; optional.
  const std::vector<FieldKey>* megatron_keys = nullptr;
  bool Wants(std::string_view name) const {
    if (all) return true;
    for (const auto& n : *names) {
      if (n == name) return true;
    }
    return false;
  }
};

struct MetricLine {
  std::optional<int64_t> step;
  std::optional<int64_t> total_steps;  // Megatron's "iteration N/ TOTAL"
  std::vector<LineMetric> metrics;
  bool npu_variant = false;             // torchtitan-npu's elapsed_time_per_step is present
  bool has_loss = false;                // the line prints a loss (wanted or not)
  // Wanted metrics the line prints without a value ("mfu: N/A", JSON null): absent at this
  // step, not missing from the log. Views into the line.
  std::vector<std::string_view> not_available;
  void Clear() {
    has_loss = false;
    not_available.clear();
    step.reset();
    total_steps.reset();
    metrics.clear();
    npu_variant = false;
  }
};

// Copies `line` without ANSI escape sequences (ESC [ ... final byte) and a trailing '\r'.
void StripAnsi(std::string_view line, std::string& out);

// A torchrun tee prefix "[rank3]:" / "[default3]:" at the start of a line: its rank, and the
// rest of the line after it. nullopt rank when the line has no such prefix.
struct RankPrefix {
  std::optional<int> rank;
  std::string_view rest;
};
RankPrefix SplitRankPrefix(std::string_view line);

// torchtitan / torchtitan-npu: "step: 14  loss:  3.24405  grad_norm:  0.8319  memory: ...".
// `step_at` is the offset of "step:" in `line`.
bool ReadTorchtitanLine(std::string_view line, size_t step_at, const MetricFilter& filter, MetricLine& out);
// Megatron-LM / MindSpeed-LLM / PanGu / Megatron-DeepSpeed training_log:
// " iteration  N/ TOTAL | consumed samples: ... | lm loss: 1.058957E+01 | grad norm: ... |".
bool ReadMegatronLine(std::string_view line, const MetricFilter& filter, MetricLine& out);
// DeepSpeed's engine progress: "step=200, skipped=4, lr=[0.00024, ...], mom=[...]".
bool ReadDeepSpeedLine(std::string_view line, size_t step_at, const MetricFilter& filter, MetricLine& out);
// HuggingFace Trainer console dict: "{'loss': 0.0602, 'grad_norm': 1.818, 'learning_rate': ...}".
bool ReadHfTrainerLine(std::string_view line, size_t brace_at, const MetricFilter& filter, MetricLine& out);

// A metrics file the trainer writes itself: one flat JSON object per line (json.dumps),
// '{"step": 1, "loss": 2.3456790447235107, "grad_norm": 0.51, ...}'. `brace_at` is the '{'
// and only spaces (or a rank prefix, already removed) may come before it. The step is
// "step", "iteration", "iter" or "global_step" (also under "train/"); "loss" also reads
// "train/loss", "train_loss", "lm loss", "lm_loss"; "grad_norm" also "grad-norm", "gradnorm",
// "grad norm", "train/grad_norm"; "lr" also "learning_rate", "learning-rate",
// "train/learning_rate"; any other numeric key under its own name. NaN, Infinity, -Infinity
// (Python's json) are values; null is "not available"; strings, booleans, arrays and
// objects are skipped. A number printed with 15 or more significant digits is a double's
// repr, i.e. exact (kExact); a shorter one keeps its printed decimals (the parser makes a
// whole series exact when any of its values is, see text_log_parser.cpp).
bool ReadJsonlLine(std::string_view line, size_t brace_at, const MetricFilter& filter, MetricLine& out);

// tqdm's progress bar drawn before `end` on the same line (HF Trainer writes its log dict
// through tqdm.write, right after the bar showed the global step):
// "\r 10%|█         | 50/500 [00:10<01:30,  4.97it/s]\r   \r{'loss': ...}" gives 50.
std::optional<int64_t> ProgressBarStep(std::string_view line, size_t end);

// The value printed after `keyword` on a line: the keyword, optional spaces, an optional
// ':' or '=', optional spaces, a number. Used for the user's custom keywords; out.name
// views `keyword`.
bool ReadKeywordValue(std::string_view line, std::string_view keyword, LineMetric& out);
// A step number near a keyword: "iteration N", "step: N", "step=N", "step N".
std::optional<int64_t> FindStepNumber(std::string_view line);

}  // namespace parity::logs
