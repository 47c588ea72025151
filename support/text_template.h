// Prompt texts kept as embedded Markdown files with `{{name}}` placeholders. A placeholder
// without a value, or a file that is not embedded, is an internal error: a template and
// the code filling it cannot drift apart silently.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "support/embedded_files.h"
#include "support/status.h"

namespace parity {

// `name` is the file's embedded path; `where` names the folder in errors ("prompts/templates").
[[nodiscard]] Result<std::string> RenderEmbeddedTemplate(std::span<const EmbeddedFile> files, std::string_view where,
                                                         std::string_view name,
                                                         const std::map<std::string, std::string>& values);

}  // namespace parity
