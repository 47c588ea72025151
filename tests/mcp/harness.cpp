#include "tests/mcp/harness.h"

namespace parity::mcp::testing {

bool CaptureSink::Send(const json& message) {
  {
    std::lock_guard lock(mutex_);
    messages_.push_back(message);
  }
  cv_.notify_all();
  return true;
}

json CaptureSink::WaitFor(const std::function<bool(const json&)>& match, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  json found;
  cv_.wait_for(lock, timeout, [&] {
    for (const auto& m : messages_) {
      if (match(m)) {
        found = m;
        return true;
      }
    }
    return false;
  });
  return found;
}

std::vector<json> CaptureSink::messages() const {
  std::lock_guard lock(mutex_);
  return messages_;
}

void CaptureSink::Clear() {
  std::lock_guard lock(mutex_);
  messages_.clear();
}

Client::Client(std::shared_ptr<Catalog> c, ServerOptions options) : catalog(std::move(c)) {
  server = std::make_unique<Server>(options, catalog);
  server->AddConnection(connection);
}

void Client::SendRaw(std::string_view raw) { server->HandleRaw(raw, Envelope{connection, sink, std::nullopt, false}); }

json Client::Reply(const json& id) {
  return sink->WaitFor([&](const json& m) { return !m.contains("method") && m.contains("id") && m["id"] == id; });
}

json Client::Call(const std::string& method, json params, json id) {
  if (id.is_null()) id = next_id++;
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  return Reply(id);
}

json Client::Initialize(json capabilities, const std::string& version) {
  json r = Call("initialize", {{"protocolVersion", version},
                               {"capabilities", std::move(capabilities)},
                               {"clientInfo", {{"name", "test"}, {"version", "1"}}}});
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  return r;
}

json ModernMeta(json capabilities) {
  return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
          {"io.modelcontextprotocol/clientCapabilities", std::move(capabilities)},
          {"io.modelcontextprotocol/clientInfo", {{"name", "test"}, {"version", "1"}}}};
}

Tool MakeTool(const std::string& name, std::function<ToolResult(const json&, ToolContext&)> handler,
              json output_schema) {
  Tool t;
  t.spec.name = name;
  t.spec.description = "test tool " + name;
  t.spec.input_schema = {{"type", "object"}};
  t.spec.output_schema = std::move(output_schema);
  t.handler = std::move(handler);
  return t;
}

}  // namespace parity::mcp::testing
