#include "support/text_template.h"

#include <algorithm>

namespace parity {

Result<std::string> RenderEmbeddedTemplate(std::span<const EmbeddedFile> files, std::string_view where,
                                           std::string_view name, const std::map<std::string, std::string>& values) {
  std::string label = std::string(where) + "/" + std::string(name);
  auto file = std::find_if(files.begin(), files.end(), [&](const EmbeddedFile& f) { return f.path == name; });
  if (file == files.end()) return Internal("prompt template " + label + " is not embedded");
  std::string_view text = file->content;
  std::string out;
  out.reserve(text.size() + 1024);
  for (size_t at = 0; at < text.size();) {
    size_t open = text.find("{{", at);
    if (open == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    size_t close = text.find("}}", open);
    if (close == std::string_view::npos) return Internal("prompt template " + label + ": unclosed {{");
    out.append(text.substr(at, open - at));
    auto value = values.find(std::string(text.substr(open + 2, close - open - 2)));
    if (value == values.end()) {
      return Internal("prompt template " + label + ": no value for " + std::string(text.substr(open, close + 2 - open)));
    }
    out.append(value->second);
    at = close + 2;
  }
  return out;
}

}  // namespace parity
