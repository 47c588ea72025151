#include "prompts/template.h"

#include <span>

#include "support/embedded_files.h"
#include "support/text_template.h"

namespace parity::prompts::templates {
std::span<const parity::EmbeddedFile> Files();
}

namespace parity::prompts {

Result<std::string> RenderTemplate(const std::string& name, const std::map<std::string, std::string>& values) {
  return RenderEmbeddedTemplate(templates::Files(), "prompts/templates", name, values);
}

nlohmann::json UserTextPromptResult(const std::string& description, const std::string& text) {
  return {{"description", description},
          {"messages", nlohmann::json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})}};
}

}  // namespace parity::prompts
