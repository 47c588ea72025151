#include "mcp-server/registry.h"

namespace parity::mcp {

std::optional<std::map<std::string, std::string>> MatchUriTemplate(std::string_view tpl, std::string_view uri) {
  std::map<std::string, std::string> vars;
  size_t t = 0, u = 0;
  while (t < tpl.size()) {
    if (tpl[t] != '{') {
      if (u >= uri.size() || uri[u] != tpl[t]) return std::nullopt;
      ++t, ++u;
      continue;
    }
    size_t close = tpl.find('}', t);
    if (close == std::string_view::npos) return std::nullopt;
    std::string name(tpl.substr(t + 1, close - t - 1));
    t = close + 1;
    // A variable runs up to the next literal character of the template (or the end), and
    // never across '/' (simple string expansion encodes reserved characters).
    char stop = t < tpl.size() ? tpl[t] : '\0';
    size_t start = u;
    while (u < uri.size() && uri[u] != '/' && (stop == '\0' || uri[u] != stop)) ++u;
    if (u == start) return std::nullopt;
    vars[name] = std::string(uri.substr(start, u - start));
  }
  if (u != uri.size()) return std::nullopt;
  return vars;
}

json ToolToJson(const ToolSpec& spec) {
  json j = {{"name", spec.name}, {"description", spec.description}, {"inputSchema", spec.input_schema}};
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.output_schema.is_null()) j["outputSchema"] = spec.output_schema;
  json a = json::object();
  if (!spec.title.empty()) a["title"] = spec.title;
  if (spec.annotations.read_only) a["readOnlyHint"] = *spec.annotations.read_only;
  if (spec.annotations.destructive) a["destructiveHint"] = *spec.annotations.destructive;
  if (spec.annotations.idempotent) a["idempotentHint"] = *spec.annotations.idempotent;
  if (spec.annotations.open_world) a["openWorldHint"] = *spec.annotations.open_world;
  if (a.size() > (spec.title.empty() ? 0u : 1u)) j["annotations"] = a;
  switch (spec.task_support) {
    case TaskSupport::kForbidden: break;
    case TaskSupport::kOptional: j["execution"] = {{"taskSupport", "optional"}}; break;
    case TaskSupport::kRequired: j["execution"] = {{"taskSupport", "required"}}; break;
  }
  return j;
}

json PromptToJson(const PromptSpec& spec) {
  json j = {{"name", spec.name}, {"description", spec.description}};
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.arguments.empty()) {
    json args = json::array();
    for (const auto& a : spec.arguments) {
      json arg = {{"name", a.name}, {"required", a.required}};
      if (!a.description.empty()) arg["description"] = a.description;
      args.push_back(std::move(arg));
    }
    j["arguments"] = std::move(args);
  }
  return j;
}

json ResourceToJson(const ResourceSpec& spec) {
  json j = {{"uri", spec.uri}, {"name", spec.name}};
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.description.empty()) j["description"] = spec.description;
  if (!spec.mime_type.empty()) j["mimeType"] = spec.mime_type;
  return j;
}

json TemplateToJson(const ResourceTemplate& t) {
  json j = {{"uriTemplate", t.uri_template}, {"name", t.name}};
  if (!t.title.empty()) j["title"] = t.title;
  if (!t.description.empty()) j["description"] = t.description;
  if (!t.mime_type.empty()) j["mimeType"] = t.mime_type;
  return j;
}

bool IsValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace parity::mcp
