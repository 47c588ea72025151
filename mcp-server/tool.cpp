#include "mcp-server/tool.h"

namespace parity::mcp {

ToolResult ToolResult::Structured(json structured, const std::string& summary) {
  ToolResult r;
  std::string text = structured.dump(2);
  if (!summary.empty()) text = summary + "\n\n" + text;
  r.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  r.structured = std::move(structured);
  return r;
}

ToolResult ToolResult::Text(std::string text) {
  ToolResult r;
  r.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  return r;
}

const policy::Policy& ToolContext::policy() const {
  static const policy::Policy kBuiltIn;
  return kBuiltIn;
}

ToolResult ToolResult::Error(const Status& status) {
  ToolResult r;
  r.is_error = true;
  json evidence = json::object();
  for (const auto& e : status.evidence()) evidence[e.name] = e.value;
  json error = {{"kind", ErrorKindName(status.kind())}, {"message", status.message()}};
  if (!status.hint().empty()) error["hint"] = status.hint();
  if (!evidence.empty()) error["evidence"] = evidence;
  r.content.push_back({{"type", "text"}, {"text", status.ToString()}});
  r.structured = {{"error", std::move(error)}};
  return r;
}

}  // namespace parity::mcp
