#include "tools/parse_log/log_params.h"

namespace parity::tools {

using json = nlohmann::json;

void DecodeParseOptions(JsonReader& r, logs::ParseOptions& o) {
  std::optional<std::string> format;
  std::optional<std::vector<std::string>> metrics, keywords, markers;
  std::optional<std::string> regex;
  std::optional<int> rank;
  std::optional<int64_t> expected;
  r.Optional("format", format).Optional("metrics", metrics).Optional("keywords", keywords);
  r.Optional("regex", regex).Optional("rank", rank).Optional("success_markers", markers);
  r.Optional("expected_steps", expected);
  if (!r.ok()) return;
  if (format) {
    auto f = logs::FormatFromName(*format);
    if (!f.ok()) {
      r.Fail(r.Child("format"), f.status().message());
      return;
    }
    o.format = *f;
  }
  if (metrics) {
    for (size_t i = 0; i < metrics->size(); ++i) {
      if ((*metrics)[i].empty()) {
        r.Fail(r.Child("metrics") + "[" + std::to_string(i) + "]", "must not be empty");
        return;
      }
    }
    o.metrics = *metrics;
  }
  if (keywords) {
    for (size_t i = 0; i < keywords->size(); ++i) {
      if ((*keywords)[i].empty()) {
        r.Fail(r.Child("keywords") + "[" + std::to_string(i) + "]", "must not be empty");
        return;
      }
    }
    o.keywords = *keywords;
  }
  if (regex) o.regex = *regex;
  if (rank) {
    if (*rank < 0) {
      r.Fail(r.Child("rank"), "must be >= 0");
      return;
    }
    o.rank = *rank;
  }
  if (markers) o.success_markers = *markers;
  if (expected) {
    if (*expected < 1) {
      r.Fail(r.Child("expected_steps"), "must be >= 1");
      return;
    }
    o.expected_steps = *expected;
  }
}

json ParseOptionsSchemaProperties() {
  json formats = json::array();
  for (const auto& f : logs::FormatNames()) formats.push_back(f);
  const json strings = {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}};
  json metrics = strings;
  metrics["description"] =
      "Metrics wanted (default [\"loss\", \"grad_norm\"]); also lr, tps, tflops, mfu, memory_gib, memory_pct, "
      "elapsed_time_per_step, loss_scale, skipped_iterations, nan_iterations, a Megatron key as printed "
      "(\"mtp head 0 lm loss\") or a TensorBoard tag; \"*\" for all.";
  json keywords = strings;
  keywords["description"] =
      "Custom keywords, read as \"<keyword>[:=] <number>\" on any line (PrecisionComparer's log_keywords, "
      "e.g. \"mtp head 0 lm loss\", \"grad norm\"); each becomes a metric of that name.";
  json markers = strings;
  markers["description"] = "Lines that mark a finished run (default [\"training success\", \"Training completed\"]).";
  return {
      {"format", {{"type", "string"}, {"enum", formats}, {"default", "auto"},
                  {"description", "Log format; auto detects it from the first metric line (or TFRecord framing)."}}},
      {"metrics", metrics},
      {"keywords", keywords},
      {"regex", {{"type", "string"},
                 {"description", "ECMAScript regex with named groups ((?<loss>...) or (?P<loss>...)); a group "
                                 "named step gives the step. Slower: every line is tried."}}},
      {"rank", {{"type", "integer"}, {"minimum", 0},
                {"description", "torchrun rank to read ([rankN]: / [defaultN]: prefixes); default 0, or the "
                                "rank that printed metrics if rank 0 did not. Unprefixed lines are always read."}}},
      {"success_markers", markers},
      {"expected_steps", {{"type", "integer"}, {"minimum", 1},
                          {"description", "The last step the run should reach (Megatron logs state it)."}}},
  };
}

std::string DescribeParse(const logs::ParseResult& r) {
  std::string s = r.path + ": " + logs::FormatName(r.format);
  if (!r.format_detail.empty()) s += " (" + r.format_detail + ")";
  if (r.rank) s += ", rank " + std::to_string(*r.rank);
  if (r.steps.first) {
    s += ", steps " + std::to_string(*r.steps.first) + ".." + std::to_string(*r.steps.last) + " (" +
         std::to_string(r.steps.seen) + " seen, " + std::to_string(r.steps.missing_count) + " missing)";
  }
  for (const auto& m : r.metrics) {
    s += ", " + m.name + " " +
         (m.precision.exact ? std::string("full precision") : std::to_string(m.precision.min_decimals) + " decimals");
    if (m.non_finite.nan + m.non_finite.inf > 0)
      s += " (" + std::to_string(m.non_finite.nan) + " NaN, " + std::to_string(m.non_finite.inf) + " Inf)";
  }
  if (r.text_log) s += std::string(", success marker ") + (r.success_marker ? "found" : "not found");
  s += ", " + std::to_string(r.errors_total) + " error line(s)";
  if (!r.errors.empty()) s += " (first: line " + std::to_string(r.errors[0].line) + " " + r.errors[0].kind + ")";
  s += ", " + std::to_string(r.warnings.size()) + " warning(s)";
  for (const auto& w : r.warnings) s += "\n  warning " + w.code + ": " + w.message;
  return s;
}

}  // namespace parity::tools
