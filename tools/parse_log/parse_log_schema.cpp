#include "tools/parse_log/parse_log_schema.h"

#include "tools/parse_log/log_params.h"

namespace parity::tools {

using json = nlohmann::json;

json ParseLogInputSchema() {
  json properties = ParseOptionsSchemaProperties();
  properties["paths"] = {
      {"type", "array"},
      {"minItems", 1},
      {"items", {{"type", "string"}, {"minLength", 1}}},
      {"description", "Log files (a '*' / '?' pattern in the file name for per-rank files), TensorBoard event "
                      "files, or directories of event files."}};
  properties["series"] = {{"type", "boolean"}, {"default", true},
                          {"description", "Return every metric's steps and values (false: summaries only)."}};
  properties["sha256"] = {{"type", "boolean"}, {"default", false},
                          {"description", "Hash each file while reading it."}};
  properties["max_errors"] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}, {"default", 200},
                              {"description", "Error lines returned in full per file (all are counted)."}};
  return {{"type", "object"},
          {"properties", properties},
          {"required", json::array({"paths"})},
          {"additionalProperties", false}};
}

namespace {

// inject_prints' PARITY_PROBE lines found in the log (only when it has any).
json ProbeLogSchema() {
  return {{"type", "object"},
          {"required", {"count", "malformed_count", "malformed", "dropped"}},
          {"properties",
           {{"count", {{"type", "integer"}}},
            {"malformed_count", {{"type", "integer"}}},
            {"malformed", {{"type", "array"},
                           {"items", {{"type", "object"},
                                      {"properties", {{"line", {{"type", "integer"}}}, {"error", {{"type", "string"}}}}}}}}},
            {"dropped", {{"type", "integer"}}},
            {"records", {{"type", "array"},
                         {"items", {{"type", "object"},
                                    {"required", {"line", "record"}},
                                    {"properties", {{"line", {{"type", "integer"}}},
                                                    {"record", {{"type", "object"}}}}}}}}}}}};
}

}  // namespace

json ParsedFileSchema() {
  const json value = {{"type", {"number", "string"}}};
  const json opt_int = {{"type", {"integer", "null"}}};
  json metric = {
      {"type", "object"},
      {"required", {"name", "source", "points", "full_precision", "printed_decimals", "nan", "inf"}},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"source", {{"type", "string"}}},
        {"points", {{"type", "integer"}}},
        {"full_precision", {{"type", "boolean"}}},
        {"printed_decimals", opt_int},
        {"decimals_vary", {{"type", "boolean"}}},
        {"resolution", {{"type", "number"}}},
        {"nan", {{"type", "integer"}}},
        {"inf", {{"type", "integer"}}},
        {"duplicates", {{"type", "integer"}}},
        {"restarts", {{"type", "integer"}}},
        {"first", {{"type", "object"}}},
        {"last", {{"type", "object"}}},
        {"min", {{"type", "number"}}},
        {"max", {{"type", "number"}}},
        {"mean", {{"type", "number"}}},
        {"steps", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
        {"values", {{"type", "array"}, {"items", value}}},
        {"decimals", {{"type", "array"}, {"items", opt_int}}}}}};
  return {
      {"type", "object"},
      {"required", {"path", "format", "metrics", "steps", "success_marker", "errors", "errors_total", "warnings"}},
      {"properties",
       {{"path", {{"type", "string"}}},
        {"format", {{"type", "string"}}},
        {"format_detail", {{"type", "string"}}},
        {"sha256", {{"type", "string"}}},
        {"bytes", {{"type", "integer"}}},
        {"lines", {{"type", "integer"}}},
        {"rank", opt_int},
        {"ranks_seen", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
        {"metrics", {{"type", "array"}, {"items", metric}}},
        {"available_metrics", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"steps", {{"type", "object"}}},
        {"success_marker", {{"type", {"boolean", "null"}}}},
        {"success_line", opt_int},
        {"errors", {{"type", "array"},
                    {"items", {{"type", "object"},
                               {"required", {"line", "kind", "text"}},
                               {"properties", {{"line", {{"type", "integer"}}},
                                               {"kind", {{"type", "string"}}},
                                               {"text", {{"type", "string"}}},
                                               {"rank", {{"type", "integer"}}}}}}}}},
        {"errors_total", {{"type", "integer"}}},
        {"error_counts", {{"type", "object"}}},
        {"warnings", {{"type", "array"},
                      {"items", {{"type", "object"},
                                 {"required", {"code", "message"}},
                                 {"properties", {{"code", {{"type", "string"}}},
                                                 {"message", {{"type", "string"}}},
                                                 {"line", {{"type", "integer"}}}}}}}}},
        {"probes", ProbeLogSchema()}}}};
}

json ParseLogOutputSchema() {
  return {{"type", "object"},
          {"required", {"files"}},
          {"properties", {{"files", {{"type", "array"}, {"items", ParsedFileSchema()}}}}}};
}

}  // namespace parity::tools
