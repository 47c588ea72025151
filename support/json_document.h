// Parsing a JSON document parity reads from a file (a ledger, a job record, hunt.json,
// inject state, stack.json, a config): with a nesting limit checked on the text before any
// value is built, because nlohmann's parser is iterative but its copy, comparison and dump
// recurse, so a file nesting 100,000 arrays parses and then overflows the stack wherever it
// is used. Invalid JSON (invalid UTF-8 in a string included) is an error naming the file and
// the byte, never an exception.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity {

// Deeper than any file parity writes or reads (hunt.json nests about 10 levels).
inline constexpr int kMaxJsonDepth = 128;

// The document in `text`; `what` names it in errors ("the ledger /r/manifest.json").
// Deeper than max_depth: InvalidArgument "nesting deeper than N at byte B"; not JSON:
// InvalidArgument with nlohmann's message (it names the byte).
Result<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& what, int max_depth = kMaxJsonDepth);

// Only the depth check: ok, or the InvalidArgument above.
Status CheckJsonDepth(std::string_view text, const std::string& what, int max_depth = kMaxJsonDepth);

}  // namespace parity
