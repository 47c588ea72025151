#include "support/json_document.h"

namespace parity {

Status CheckJsonDepth(std::string_view text, const std::string& what, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return InvalidArgument(what + ": nesting deeper than " + std::to_string(max_depth) + " levels at byte " +
                               std::to_string(i))
            .WithHint("parity never writes such a file: it was made or changed by something else");
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;  // unbalanced text is the parser's to report
    }
  }
  return Status::Ok();
}

Result<nlohmann::json> ParseJsonDocument(std::string_view text, const std::string& what, int max_depth) {
  PARITY_RETURN_IF_ERROR(CheckJsonDepth(text, what, max_depth));
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(what + ": not valid JSON: " + e.what());
  }
}

}  // namespace parity
