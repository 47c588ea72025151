// parse_log's result as JSON (the tool's structuredContent, and what compare_logs accepts
// back instead of a path). Non-finite values are written as the strings "nan", "inf",
// "-inf", since JSON numbers cannot carry them.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "domain/logs/log_parser.h"
#include "support/status.h"

namespace parity::logs {

using json = nlohmann::json;

// `include_series`: the steps and values of every metric with at most `inline_points`
// points; a longer one gets "series_inline": false and a 100-point "sample" instead (the
// caller writes the whole series to a file: series_file.h).
json ParseResultToJson(const ParseResult& result, bool include_series, size_t inline_points = SIZE_MAX);

// Reads one element of parse_log's "files" back; `where` names it in errors
// ("arguments.baseline"). Needs each metric's "steps" and "values", or "series_file" (the
// file a bounded parse_log result names).
Result<ParseResult> ParseResultFromJson(const json& value, const std::string& where);

json ValueToJson(double v);

// The files a merged result was read from: [{path, sha256|null, bytes, ranks}].
json SourcesToJson(const std::vector<LogSource>& sources);

}  // namespace parity::logs
