#include "prompts/template.h"

#include <span>

#include "support/embedded_files.h"

namespace parity::prompts::templates {
std::span<const parity::EmbeddedFile> Files();
}

namespace parity::prompts {

Result<std::string> RenderTemplate(const std::string& name, const std::map<std::string, std::string>& values) {
  std::string_view text;
  bool found = false;
  for (const auto& f : templates::Files()) {
    if (f.path == name) {
      text = f.content;
      found = true;
    }
  }
  if (!found) return Internal("prompt template " + name + " is not embedded");
  std::string out;
  out.reserve(text.size() + 1024);
  size_t at = 0;
  while (at < text.size()) {
    size_t open = text.find("{{", at);
    if (open == std::string_view::npos) {
      out.append(text.substr(at));
      break;
    }
    size_t close = text.find("}}", open);
    if (close == std::string_view::npos) return Internal("prompt template " + name + ": unclosed {{");
    out.append(text.substr(at, open - at));
    std::string key(text.substr(open + 2, close - open - 2));
    auto it = values.find(key);
    if (it == values.end()) return Internal("prompt template " + name + ": no value for {{" + key + "}}");
    out.append(it->second);
    at = close + 2;
  }
  return out;
}

}  // namespace parity::prompts
