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

}  // namespace parity::prompts
