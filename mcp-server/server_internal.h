// Shared by the server's own .cpp files: one request as the handlers see it, and the
// channel a handler uses to reach its client.
#pragma once

#include "mcp-server/server.h"

namespace parity::mcp {

struct RequestCtx {
  json id;
  std::string id_key;
  std::string method;
  json params;  // never null: an object
  json meta;    // params._meta, or an empty object
  bool modern = false;
  std::string protocol_version;
  json client_capabilities = json::object();
  std::optional<LogLevel> log_level;
  Envelope env;
  CancellationSource cancel;
  bool deferred = false;  // the handler keeps the request open and replies later (or never)
};

// Notifications go on the request's sink; server->client requests (legacy era only) go the
// same way and wait on the connection for the answer.
class RequestChannel : public ClientChannel {
 public:
  RequestChannel(RequestCtx& ctx, std::chrono::milliseconds timeout) : ctx_(ctx), timeout_(timeout) {}
  void Notify(const std::string& method, json params) override {
    ctx_.env.sink->Send({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }
  Result<json> Request(const std::string& method, json params, const CancellationToken& cancel) override {
    if (ctx_.modern) return Unavailable("2026-07-28 servers send no requests to the client");
    return ctx_.env.connection->Call(method, std::move(params), *ctx_.env.sink, cancel, timeout_);
  }

 private:
  RequestCtx& ctx_;
  std::chrono::milliseconds timeout_;
};

// Pagination: an opaque cursor over a listing; -32602 for a cursor we did not issue.
Result<size_t> DecodeCursor(const json& params);
std::string EncodeCursor(size_t offset);

}  // namespace parity::mcp
