#include "mcp-server/jsonrpc.h"

namespace parity::mcp {

namespace {

ParsedError Invalid(json id, std::string message) {
  return {std::move(id), RpcError{rpc::kInvalidRequest, std::move(message), nullptr}};
}

bool ValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

// The deepest nesting of arrays and objects in `raw`, counted outside strings, stopping
// as soon as it passes `limit`. nlohmann's parser keeps its own stack, but the value it
// builds is destroyed and dumped recursively: a message nesting 100,000 objects would
// overflow the thread's stack there. Checked before parsing, in one pass over the bytes.
bool NestsDeeperThan(std::string_view raw, size_t limit) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : raw) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace

ParsedMessage ClassifyMessage(const json& v) {
  if (!v.is_object()) return Invalid(nullptr, "invalid request: expected a JSON-RPC object");
  json id = v.contains("id") ? v["id"] : json();
  json reply_id = ValidId(id) ? id : json();
  auto version = v.find("jsonrpc");
  if (version == v.end() || *version != "2.0") return Invalid(reply_id, "invalid request: \"jsonrpc\" must be \"2.0\"");
  if (v.contains("method")) {
    const json& method = v["method"];
    if (!method.is_string()) return Invalid(reply_id, "invalid request: \"method\" must be a string");
    json params = v.contains("params") ? v["params"] : json();
    if (!params.is_null() && !params.is_object()) {
      return Invalid(reply_id, "invalid request: \"params\" must be an object");
    }
    if (!v.contains("id")) return Notification{method.get<std::string>(), std::move(params)};
    if (!ValidId(id)) return Invalid(nullptr, "invalid request: \"id\" must be a string or an integer");
    return Request{id, method.get<std::string>(), std::move(params)};
  }
  if (v.contains("result") || v.contains("error")) {
    if (!ValidId(id)) return Invalid(nullptr, "invalid response: \"id\" must be a string or an integer");
    return Response{id, v.value("result", json()), v.value("error", json())};
  }
  return Invalid(reply_id, "invalid request: no \"method\", \"result\" or \"error\"");
}

ParsedBody ParseBody(std::string_view raw, size_t max_bytes) {
  ParsedBody body;
  if (raw.size() > max_bytes) {
    body.messages.push_back(ParsedError{nullptr, RpcError{rpc::kInvalidRequest,
        "message of " + std::to_string(raw.size()) + " bytes exceeds the limit of " + std::to_string(max_bytes) +
        " bytes", nullptr}});
    return body;
  }
  if (NestsDeeperThan(raw, kMaxNestingDepth)) {
    body.messages.push_back(ParsedError{nullptr, RpcError{rpc::kParseError,
        "parse error: the message nests arrays/objects deeper than " + std::to_string(kMaxNestingDepth) + " levels",
        nullptr}});
    return body;
  }
  json value = json::parse(raw.begin(), raw.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    body.messages.push_back(ParsedError{nullptr, RpcError{rpc::kParseError, "parse error: invalid JSON", nullptr}});
    return body;
  }
  if (value.is_array()) {
    body.batch = true;
    if (value.empty()) {
      body.messages.push_back(Invalid(nullptr, "invalid request: empty batch"));
      return body;
    }
    for (const auto& element : value) body.messages.push_back(ClassifyMessage(element));
    return body;
  }
  body.messages.push_back(ClassifyMessage(value));
  return body;
}

std::string IdKey(const json& id) { return id.is_string() ? "s:" + id.get<std::string>() : "n:" + id.dump(); }

std::string DumpLine(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace parity::mcp
