// An in-memory client for the protocol tests: raw JSON-RPC text in through
// Server::HandleRaw, every message the server sends captured and awaitable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "mcp-server/server.h"

namespace parity::mcp::testing {

class CaptureSink : public Sink {
 public:
  bool Send(const json& message) override;
  // Waits until a message satisfies `match`; returns it, or null after `timeout`.
  json WaitFor(const std::function<bool(const json&)>& match,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::vector<json> messages() const;
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<json> messages_;
};

struct Client {
  explicit Client(std::shared_ptr<Catalog> catalog, ServerOptions options = {});

  void SendRaw(std::string_view raw);
  void Send(const json& message) { SendRaw(message.dump()); }
  // Sends a request and waits for its reply.
  json Call(const std::string& method, json params = json::object(), json id = nullptr);
  json Reply(const json& id);  // waits for the reply to `id`
  // A legacy handshake with these client capabilities.
  json Initialize(json capabilities = json::object(), const std::string& version = "2025-11-25");

  std::shared_ptr<Catalog> catalog;
  std::unique_ptr<Server> server;
  std::shared_ptr<Connection> connection = std::make_shared<Connection>();
  std::shared_ptr<CaptureSink> sink = std::make_shared<CaptureSink>();
  int next_id = 1;
};

// _meta of a 2026-07-28 request.
json ModernMeta(json capabilities = json::object());
Tool MakeTool(const std::string& name, std::function<ToolResult(const json&, ToolContext&)> handler,
              json output_schema = nullptr);

}  // namespace parity::mcp::testing
