// parse_log's result as JSON (the tool's structuredContent, and what compare_logs accepts
// back instead of a path). Non-finite values are written as the strings "nan", "inf",
// "-inf", since JSON numbers cannot carry them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "domain/logs/log_parser.h"
#include "support/status.h"

namespace parity::logs {

using json = nlohmann::json;

// `include_series`: the steps and values of every metric (they can be long).
json ParseResultToJson(const ParseResult& result, bool include_series);

// Reads one element of parse_log's "files" back; `where` names it in errors
// ("arguments.baseline"). Needs each metric's "steps" and "values".
Result<ParseResult> ParseResultFromJson(const json& value, const std::string& where);

json ValueToJson(double v);

}  // namespace parity::logs
