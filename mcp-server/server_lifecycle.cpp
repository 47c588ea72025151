// The handshake (2025-11-25 era initialize, ping, logging/setLevel) and the 2026-07-28
// server/discover and subscriptions/listen.
#include <algorithm>

#include "mcp-server/server_internal.h"

namespace parity::mcp {

Server::Outcome Server::OnInitialize(RequestCtx& ctx) {
  const json& p = ctx.params;
  if (!p.contains("protocolVersion") || !p["protocolVersion"].is_string()) {
    return RpcError{rpc::kInvalidParams, "params.protocolVersion: required string", nullptr};
  }
  if (p.contains("capabilities") && !p["capabilities"].is_object()) {
    return RpcError{rpc::kInvalidParams, "params.capabilities: expected object", nullptr};
  }
  std::string requested = p["protocolVersion"];
  const auto& supported = SupportedLegacyVersions();
  // Echo a version we speak; otherwise answer with the latest (the client decides).
  std::string negotiated =
      std::find(supported.begin(), supported.end(), requested) != supported.end() ? requested : kLatestLegacyVersion;
  LegacyState state = ctx.env.connection->legacy();
  state.protocol_version = negotiated;
  state.client_capabilities = p.value("capabilities", json::object());
  state.client_info = p.value("clientInfo", json());
  ctx.env.connection->SetLegacy(state);
  ctx.protocol_version = negotiated;
  json result = {{"protocolVersion", negotiated}, {"capabilities", Capabilities(false)}, {"serverInfo", ServerInfo()}};
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  return result;
}

Server::Outcome Server::OnPing(RequestCtx&) { return json::object(); }

Server::Outcome Server::OnSetLevel(RequestCtx& ctx) {
  const json& level = ctx.params.contains("level") ? ctx.params["level"] : json();
  auto parsed = level.is_string() ? ParseLogLevel(level.get<std::string>()) : std::nullopt;
  if (!parsed) {
    return RpcError{rpc::kInvalidParams,
                    "params.level: expected one of debug, info, notice, warning, error, critical, alert, emergency",
                    nullptr};
  }
  ctx.env.connection->SetLogLevel(*parsed);
  return json::object();
}

Server::Outcome Server::OnDiscover(RequestCtx&) {
  json result = {{"supportedVersions", json::array({kModernVersion})},
                 {"capabilities", Capabilities(true)},
                 {"serverInfo", ServerInfo()},
                 {"ttlMs", options_.cache_ttl_ms},
                 {"cacheScope", "public"}};
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  return result;
}

Server::Outcome Server::OnListen(RequestCtx& ctx) {
  json filter = ctx.params.value("notifications", json::object());
  if (!filter.is_object()) return RpcError{rpc::kInvalidParams, "params.notifications: expected object", nullptr};
  std::string subscription_id = ctx.id.is_string() ? ctx.id.get<std::string>() : ctx.id.dump();
  // Acknowledge only what we can deliver.
  json granted = json::object();
  for (const char* key : {"toolsListChanged", "promptsListChanged", "resourcesListChanged"}) {
    if (filter.value(key, false)) granted[key] = true;
  }
  if (filter.contains("resourceSubscriptions") && filter["resourceSubscriptions"].is_array()) {
    granted["resourceSubscriptions"] = filter["resourceSubscriptions"];
  }
  uint64_t listener_id;
  {
    std::lock_guard lock(listeners_mutex_);
    listener_id = next_listener_++;
    listeners_[listener_id] = Listener{subscription_id, granted, ctx.env.sink};
  }
  ctx.deferred = true;  // the stream stays open until the client cancels or goes away
  ctx.env.connection->Begin(ctx.id_key, ctx.cancel, [this, listener_id] {
    std::lock_guard lock(listeners_mutex_);
    listeners_.erase(listener_id);
  });
  ctx.env.sink->Send({{"jsonrpc", "2.0"},
                      {"method", "notifications/subscriptions/acknowledged"},
                      {"params",
                       {{"_meta", {{"io.modelcontextprotocol/subscriptionId", subscription_id}}},
                        {"notifications", granted}}}});
  return json::object();
}

}  // namespace parity::mcp
