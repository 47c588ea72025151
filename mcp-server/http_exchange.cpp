#include "mcp-server/http_exchange.h"

#include "mcp-server/http_transport.h"

namespace parity::mcp {

bool ExchangeSink::Send(const json& message) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    queue_.push_back(message);
  }
  cv_.notify_all();
  return true;
}

void ExchangeSink::NoReply(const json& id) {
  {
    std::lock_guard lock(mutex_);
    if (!batch_ && id != request_id_) return;
    no_reply_ = true;
  }
  cv_.notify_all();
}

std::optional<json> ExchangeSink::Pop(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, wait, [this] { return !queue_.empty() || closed_ || no_reply_; });
  if (queue_.empty()) return std::nullopt;
  json m = std::move(queue_.front());
  queue_.pop_front();
  return m;
}

bool ExchangeSink::closed() {
  std::lock_guard lock(mutex_);
  return closed_;
}

bool ExchangeSink::ended() {
  std::lock_guard lock(mutex_);
  return no_reply_ && queue_.empty();
}

bool ExchangeSink::IsFinal(const json& m) const {
  if (batch_) return m.is_array();
  return m.is_object() && !m.contains("method") && m.contains("id") && m["id"] == request_id_;
}

void ExchangeSink::Close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  cv_.notify_all();
}

std::string TrimOws(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::optional<std::string> DecodeBase64Strict(std::string_view in) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '=') {
      if (i < in.size() - 2) return std::nullopt;
      ++pad;
      continue;
    }
    if (pad) return std::nullopt;  // data after padding
    size_t v = alphabet.find(c);
    if (v == std::string::npos) return std::nullopt;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xFF));
    }
  }
  return out;
}

namespace {

RpcError Mismatch(std::string message) { return RpcError{rpc::kHeaderMismatch, std::move(message), nullptr}; }

// A header value as the client meant it: OWS trimmed, =?base64?...?= decoded.
std::optional<std::string> HeaderValue(const std::string& raw, bool& bad_encoding) {
  std::string v = TrimOws(raw);
  const std::string prefix = "=?base64?", suffix = "?=";
  if (v.size() >= prefix.size() + suffix.size() && v.compare(0, prefix.size(), prefix) == 0 &&
      v.compare(v.size() - suffix.size(), suffix.size(), suffix) == 0) {
    auto decoded = DecodeBase64Strict(std::string_view(v).substr(prefix.size(), v.size() - prefix.size() - suffix.size()));
    if (!decoded) {
      bad_encoding = true;
      return std::nullopt;
    }
    return decoded;
  }
  return v;
}

std::string BodyValue(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::optional<RpcError> CheckStandardHeaders(const httplib::Request& http, const Request& request,
                                             const Catalog& catalog) {
  if (!http.has_header("Mcp-Method")) return Mismatch("Mcp-Method header is required in the 2026-07-28 era");
  bool bad = false;
  auto method = HeaderValue(http.get_header_value("Mcp-Method"), bad);
  if (bad || !method || *method != request.method) {
    return Mismatch("Mcp-Method header does not match the body's method \"" + request.method + "\"");
  }
  // SEP-2243's name-shaped fields, and the tasks extension's (SEP-2663: Mcp-Name is the
  // task id for tasks/get, tasks/update and tasks/cancel).
  const char* name_key = request.method == "tools/call" || request.method == "prompts/get" ? "name"
                         : request.method == "resources/read"                            ? "uri"
                         : request.method == "tasks/get" || request.method == "tasks/update" ||
                                 request.method == "tasks/cancel"
                             ? "taskId"
                             : nullptr;
  if (!name_key) return std::nullopt;
  const json& params = request.params;
  if (!params.is_object() || !params.contains(name_key) || !params[name_key].is_string()) return std::nullopt;
  std::string body_name = params[name_key];
  // A task id header is checked when given; clients of the first tasks-extension releases
  // do not send it yet.
  if (!http.has_header("Mcp-Name") && std::string_view(name_key) == "taskId") return std::nullopt;
  if (!http.has_header("Mcp-Name")) return Mismatch("Mcp-Name header is required for " + request.method);
  auto name = HeaderValue(http.get_header_value("Mcp-Name"), bad);
  if (bad || !name || *name != body_name) {
    return Mismatch("Mcp-Name header does not match params." + std::string(name_key) + " \"" + body_name + "\"");
  }
  if (request.method != "tools/call") return std::nullopt;
  auto tool = catalog.tools.Find(body_name);
  if (!tool) return std::nullopt;  // the server answers unknown tools
  const json& props = tool->spec.input_schema.value("properties", json::object());
  if (!props.is_object()) return std::nullopt;
  json arguments = params.value("arguments", json::object());
  if (!arguments.is_object()) arguments = json::object();
  for (auto& [prop, def] : props.items()) {
    if (!def.is_object() || !def.contains("x-mcp-header") || !def["x-mcp-header"].is_string()) continue;
    std::string header = "Mcp-Param-" + def["x-mcp-header"].get<std::string>();
    bool in_body = arguments.contains(prop) && !arguments[prop].is_null();
    if (!http.has_header(header)) {
      if (in_body) return Mismatch(header + " header is required: arguments." + prop + " is set");
      continue;
    }
    bool bad_value = false;
    auto value = HeaderValue(http.get_header_value(header), bad_value);
    if (bad_value) return Mismatch(header + ": invalid =?base64?...?= encoding");
    if (!in_body) return Mismatch(header + " header given but arguments." + prop + " is not set");
    if (*value != BodyValue(arguments[prop])) return Mismatch(header + " header does not match arguments." + prop);
  }
  return std::nullopt;
}

}  // namespace parity::mcp
