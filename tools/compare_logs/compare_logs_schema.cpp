#include "tools/compare_logs/compare_logs_schema.h"

#include "domain/logs/presets.h"
#include "tools/parse_log/log_params.h"
#include "tools/parse_log/parse_log_schema.h"

namespace parity::tools {

using json = nlohmann::json;

namespace {

json ToleranceSchema() {
  return {{"type", "object"},
          {"properties", {{"abs", {{"type", "number"}, {"minimum", 0}}}, {"rel", {{"type", "number"}, {"minimum", 0}}}}},
          {"additionalProperties", false},
          {"description", "A step is within when |c-b| <= abs or |c-b|/|b| <= rel (give one or both)."}};
}

json RunSchema(const char* side) {
  return {{"oneOf", {{{"type", "string"}, {"minLength", 1}}, ParsedFileSchema()}},
          {"description", std::string("The ") + side +
                              " run: a log file, a TensorBoard event file or directory, a folder or glob pattern of "
                              "per-rank logs (rank_<N>.log, train_<N>.log, <N>/stdout.log: one run, every rank "
                              "compared), or one element of parse_log's files (with series)."}};
}

// One divergent probe pair (docs/CONTRACTS.md §3, "probes").
json ProbeDivergenceSchema() {
  const json str = {{"type", "string"}};
  return {{"type", "object"},
          {"required", {"key", "id", "site", "when", "name", "call", "rank", "fields", "baseline", "candidate"}},
          {"properties",
           {{"key", str},
            {"id", str},
            {"site", str},
            {"when", {{"type", "string"}, {"enum", {"before", "after", "entry", "return"}}}},
            {"name", str},
            {"call", {{"type", "integer"}}},
            {"rank", {{"type", {"integer", "null"}}}},
            {"fields", {{"type", "array"}, {"items", str}}},
            {"baseline", {{"type", "object"}}},
            {"candidate", {{"type", "object"}}},
            {"baseline_line", {{"type", "integer"}}},
            {"candidate_line", {{"type", "integer"}}},
            {"note", {{"type", {"string", "null"}}}},
            {"stats", {{"type", "object"}}},
            {"stats_within_tolerance", {{"type", "boolean"}}},
            {"within_tolerance", {{"type", "boolean"}}}}}};
}

// null when no matched probe differs (object keywords do not constrain null).
json NullableProbeDivergenceSchema() {
  json schema = ProbeDivergenceSchema();
  schema["type"] = {"object", "null"};
  return schema;
}

json ProbeComparisonSchema() {
  const json keys = {{"type", "array"}, {"items", {{"type", "string"}}}};
  return {{"type", "object"},
          {"description", "inject_prints' PARITY_PROBE lines of both runs, paired on id|when|name|call|rank in "
                          "baseline order; present when either log has any. Equality is bitwise (hash)."},
          {"required", {"baseline_count", "candidate_count", "matched", "divergent_count", "first_divergent",
                        "next_divergent", "unmatched_baseline", "unmatched_candidate", "malformed"}},
          {"properties",
           {{"baseline_count", {{"type", "integer"}}},
            {"candidate_count", {{"type", "integer"}}},
            {"matched", {{"type", "integer"}}},
            {"divergent_count", {{"type", "integer"}}},
            {"first_divergent", NullableProbeDivergenceSchema()},
            {"next_divergent", {{"type", "array"}, {"items", ProbeDivergenceSchema()}}},
            {"unmatched_baseline", keys},
            {"unmatched_candidate", keys},
            {"unmatched_baseline_count", {{"type", "integer"}}},
            {"unmatched_candidate_count", {{"type", "integer"}}},
            {"malformed", {{"type", "array"},
                           {"items", {{"type", "object"},
                                      {"required", {"side", "line", "error"}},
                                      {"properties", {{"side", {{"type", "string"}, {"enum", {"baseline", "candidate"}}}},
                                                      {"line", {{"type", "integer"}}},
                                                      {"error", {{"type", "string"}}}}}}}}},
            {"malformed_count", {{"type", "integer"}}},
            {"notes", keys},
            {"tolerance", {{"type", "object"}}},
            {"beyond_tolerance_count", {{"type", "integer"}}},
            {"first_beyond_tolerance", NullableProbeDivergenceSchema()}}}};
}

}  // namespace

json CompareLogsInputSchema() {
  json properties = ParseOptionsSchemaProperties();
  json presets = json::array();
  for (const auto& p : logs::PresetNames()) presets.push_back(p);
  properties["baseline"] = RunSchema("baseline");
  properties["candidate"] = RunSchema("candidate");
  properties["metrics"]["description"] =
      "Metrics to compare (default: the preset's, else [\"loss\", \"grad_norm\"]).";
  properties["preset"] = {
      {"type", "string"},
      {"enum", presets},
      {"description", "premerge: every step |diff| <= 1e-5 for loss and grad_norm, NaN/Inf counts equal. "
                      "precision-comparer: |diff| <= 1e-3, both logs must say \"training success\". "
                      "torchtitan-npu: loss first-step abs < 0.005 and rel < 0.5%, mean abs < 0.01 and rel < 1%; "
                      "grad_norm mean rel <= 10%."}};
  properties["tolerance"] = ToleranceSchema();
  properties["probe_tolerance"] = ToleranceSchema();
  properties["probe_tolerance"]["description"] =
      "Probes only (default: `tolerance`): each divergent probe's sum/mean/min/max/norm are compared against it "
      "and probes.first_beyond_tolerance names the first pair that differs by more (probe equality stays bitwise).";
  properties["tolerances"] = {{"type", "object"},
                              {"additionalProperties", ToleranceSchema()},
                              {"description", "Per-metric tolerance, over `tolerance` and the preset."}};
  properties["bitwise"] = {{"type", "boolean"}, {"default", false},
                           {"description", "Every step must be identical; needs full-precision values "
                                           "(TensorBoard) to PASS."}};
  properties["steps"] = {{"type", "string"}, {"enum", {"strict", "common"}}, {"default", "strict"},
                         {"description", "strict: both runs must log the same steps (else an error); common: "
                                         "compare the steps both logged."}};
  properties["case"] = {{"type", "string"}, {"pattern", "^[A-Za-z0-9._-]{1,128}$"}, {"default", "compare"},
                        {"description", "Report subdirectory: <report_dir>/<case>/report.json."}};
  properties["noise"] = {
      {"type", "object"},
      {"required", json::array({"runs"})},
      {"properties",
       {{"runs", {{"type", "array"}, {"minItems", 2}, {"items", RunSchema("baseline repeat")},
                  {"description", "K >= 2 runs of the same baseline (same commit, checkpoint, argv, environment); "
                                  "the first is the reference the candidate is measured from."}}},
        {"safety_factor", {{"type", "number"}, {"minimum", 1}, {"default", 5}}}}},
      {"additionalProperties", false},
      {"description", "Calibrated verdict: instead of a fixed tolerance, each metric at each step is judged against "
                      "the baseline runs' own noise: envelope(s) = F x max(range carried to s, largest relative range "
                      "x |run 1(s)|, one unit of the value's resolution), range(t) being the K runs' max pairwise "
                      "|difference| at step t; 0 everywhere when the runs never differ. PASS where |candidate - run 1| "
                      "<= envelope. Written to report.json (noise) and the CSV (<metric>_noise_envelope)."}};
  properties["report_dir"] = {{"type", "string"}, {"description", "Overrides the server's report directory."}};
  return {{"type", "object"},
          {"properties", properties},
          {"required", json::array({"baseline", "candidate"})},
          {"additionalProperties", false}};
}

json CompareLogsOutputSchema() {
  return {{"type", "object"},
          {"required", {"schema", "verdict", "verdict_reason", "metrics", "baseline", "candidate", "report",
                        "csv_path"}},
          {"properties",
           {{"schema", {{"type", "string"}}},
            {"case", {{"type", "string"}}},
            {"verdict", {{"type", "string"}, {"enum", {"PASS", "FAIL", "INCONCLUSIVE"}}}},
            {"verdict_reason", {{"type", "string"}}},
            {"preset", {{"type", {"string", "null"}}}},
            {"mode", {{"type", "string"}}},
            {"steps", {{"type", "string"}}},
            {"baseline", {{"type", "object"}}},
            {"candidate", {{"type", "object"}}},
            {"metrics", {{"type", "object"}}},
            {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"csv", {{"type", "string"}}},
            {"report", {{"type", "string"}}},
            {"csv_path", {{"type", "string"}}},
            {"ledger_entry", {{"type", {"string", "null"}}}},
            {"noise", {{"type", "object"}}},
            {"probes", ProbeComparisonSchema()}}}};
}

}  // namespace parity::tools
