// The parse options that parse_log and compare_logs share: decoding them from tool
// arguments (errors name the JSON path) and their JSON-schema properties.
#pragma once

#include <nlohmann/json.hpp>

#include "domain/logs/log_parser.h"
#include "support/json_reader.h"

namespace parity::tools {

// Reads format, metrics, keywords, regex, rank, success_markers and expected_steps.
// `metrics_default` stays when the argument is absent.
void DecodeParseOptions(JsonReader& reader, logs::ParseOptions& options);

// The JSON-schema "properties" entries for the same arguments.
nlohmann::json ParseOptionsSchemaProperties();

// One line per file for a human: format, rank, steps, precision, marker, errors, warnings.
std::string DescribeParse(const logs::ParseResult& result);

}  // namespace parity::tools
