// Prompt message templates (prompts/templates/*.md, embedded): `{{name}}` placeholders
// filled from a map; an unknown placeholder is an internal error, so a template and its
// code cannot drift apart silently.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::prompts {

Result<std::string> RenderTemplate(const std::string& name, const std::map<std::string, std::string>& values);

// A prompts/get result of one user message holding `text`.
nlohmann::json UserTextPromptResult(const std::string& description, const std::string& text);

}  // namespace parity::prompts
