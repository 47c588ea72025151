#include "mcp-server/registry.h"

#include <algorithm>
#include <map>
#include <vector>

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

namespace {

// Which keywords constrain instances of one JSON type (JSON Schema 2020-12 validation).
bool AppliesTo(const std::string& keyword, const std::string& type) {
  static const std::map<std::string, std::vector<std::string>> kByType = {
      {"object", {"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                  "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "unevaluatedProperties"}},
      {"array", {"items", "prefixItems", "contains", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems",
                 "unevaluatedItems"}},
      {"string", {"minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType"}},
      {"number", {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}},
  };
  auto it = kByType.find(type == "integer" ? "number" : type);
  return it != kByType.end() && std::find(it->second.begin(), it->second.end(), keyword) != it->second.end();
}

bool TypeSpecific(const std::string& keyword) {
  for (const char* t : {"object", "array", "string", "number"}) {
    if (AppliesTo(keyword, t)) return true;
  }
  return false;
}

}  // namespace

json PortableSchema(const json& schema) {
  if (!schema.is_object()) return schema;
  json out = json::object();
  for (const auto& [key, value] : schema.items()) {
    if (key == "properties" || key == "patternProperties" || key == "$defs" || key == "dependentSchemas") {
      json children = json::object();
      if (value.is_object()) {
        for (const auto& [name, child] : value.items()) children[name] = PortableSchema(child);
      } else {
        children = value;
      }
      out[key] = std::move(children);
    } else if (key == "anyOf" || key == "oneOf" || key == "allOf" || key == "prefixItems") {
      json list = json::array();
      for (const auto& child : value) list.push_back(PortableSchema(child));
      out[key] = value.is_array() ? list : value;
    } else if (key == "items" || key == "additionalProperties" || key == "not" || key == "contains" ||
               key == "propertyNames" || key == "if" || key == "then" || key == "else") {
      out[key] = PortableSchema(value);
    } else {
      out[key] = value;
    }
  }
  if (!out.contains("type") || !out["type"].is_array()) return out;
  const json types = out["type"];
  if (types.size() == 1) {
    out["type"] = types[0];
    return out;
  }
  json branches = json::array();
  for (const auto& t : types) {
    json branch = {{"type", t}};
    for (const auto& [key, value] : out.items()) {
      if (t.is_string() && AppliesTo(key, t.get<std::string>())) branch[key] = value;
    }
    branches.push_back(std::move(branch));
  }
  json portable = json::object();
  for (const auto& [key, value] : out.items()) {
    if (key != "type" && !TypeSpecific(key)) portable[key] = value;
  }
  if (portable.contains("anyOf")) {  // already a choice: both must hold
    portable["allOf"] = json::array({{{"anyOf", portable["anyOf"]}}, {{"anyOf", branches}}});
    portable.erase("anyOf");
  } else {
    portable["anyOf"] = std::move(branches);
  }
  return portable;
}

json ToolToJson(const ToolSpec& spec) {
  json j = {{"name", spec.name}, {"description", spec.description}, {"inputSchema", PortableSchema(spec.input_schema)}};
  if (!spec.title.empty()) j["title"] = spec.title;
  if (!spec.output_schema.is_null()) j["outputSchema"] = PortableSchema(spec.output_schema);
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
