// The MCP server: one dispatch table binding method names to handlers, both protocol eras
// (mcp.md §1: a request carrying modern _meta, or arriving with MCP-Protocol-Version
// >= 2026-07-28, is served statelessly; everything else follows the 2025-11-25 handshake),
// a bounded worker pool for handlers that may block, cancellation, and reply-once.
// Transports hand it parsed messages with the Connection they came on and a Sink for the
// replies; they never see handlers, and handlers never see transports.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "mcp-server/call_context.h"
#include "mcp-server/connection.h"
#include "mcp-server/errors.h"
#include "mcp-server/jsonrpc.h"
#include "mcp-server/registry.h"
#include "mcp-server/signed_state.h"
#include "mcp-server/worker_pool.h"

namespace parity::mcp {

inline constexpr const char* kModernVersion = "2026-07-28";
inline constexpr const char* kLatestLegacyVersion = "2025-11-25";
// Every version served, newest first.
const std::vector<std::string>& SupportedLegacyVersions();
bool IsModernVersion(std::string_view version);

struct ServerOptions {
  std::string name = "parity";
  std::string title = "parity";
  std::string version;  // default: PARITY_VERSION
  std::string instructions;
  std::filesystem::path report_dir = "numerical_report";
  size_t worker_threads = 8;  // 0: handlers run on the calling thread
  size_t max_queued = 32;
  size_t page_size = 100;
  int64_t cache_ttl_ms = 300000;
  std::chrono::milliseconds client_request_timeout = std::chrono::minutes(10);
  std::chrono::milliseconds min_progress_interval{20};
  // The user's policy every tool call runs under (support/policy.h); null: the built-in
  // rules with no folder.
  std::shared_ptr<const policy::Policy> policy;
};

// How a message arrived.
struct Envelope {
  std::shared_ptr<Connection> connection;
  std::shared_ptr<Sink> sink;  // replies and the request's own notifications
  // HTTP: the MCP-Protocol-Version header, when present (the era hint on HTTP).
  std::optional<std::string> header_version;
  bool http = false;
};

class TaskStore;
class TaskExtension;
struct RequestCtx;

class Server {
 public:
  Server(ServerOptions options, std::shared_ptr<Catalog> catalog);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Handles one parsed message. Replies go to envelope.sink, possibly later from a worker.
  void Handle(const Message& message, const Envelope& envelope);
  // Handles one raw message (a stdio line, a POST body): parse, then Handle each; parse
  // errors are answered on envelope.sink. Batches are accepted only on a connection that
  // negotiated 2025-03-26. The fuzzing entry point.
  void HandleRaw(std::string_view raw, const Envelope& envelope, size_t max_bytes = kDefaultMaxMessageBytes);
  // A parsed JSON-RPC batch (2025-03-26 connections only): the replies go to
  // envelope.sink as one array once every request has its reply; notifications and
  // server->client requests of its handlers pass through as they come.
  void HandleBatch(const ParsedBody& body, const Envelope& envelope);

  // Whether a request selects the 2026-07-28 era (mcp.md §1.1).
  static bool IsModernRequest(const Request& request, const std::optional<std::string>& header_version);

  // Legacy connections to notify of list changes (stdio process, HTTP sessions).
  void AddConnection(const std::shared_ptr<Connection>& connection);
  // Sends notifications/resources/updated to subscribers of `uri`.
  void NotifyResourceUpdated(const std::string& uri);

  // Waits until no handler is running (tests, stdio EOF).
  void WaitIdle();
  // The same for at most `timeout`; returns whether nothing runs any more (handlers and
  // legacy tasks). A transport that ended calls it before the process exits: a handler
  // that ignores cancellation must not keep a server alive whose client is gone.
  bool WaitIdleFor(std::chrono::milliseconds timeout);
  // The transport is ending: every task (both eras) is cancelled.
  void CancelTasks();

  const ServerOptions& options() const { return options_; }
  Catalog& catalog() { return *catalog_; }
  const StateSigner& signer() const { return signer_; }
  json ServerInfo() const;
  json Capabilities(bool modern) const;

 private:
  using Outcome = std::variant<json, RpcError>;
  struct Method {
    std::function<Outcome(RequestCtx&)> handler;
    bool legacy = true;
    bool modern = true;
    bool on_worker = false;  // may block: runs on the worker pool
  };

  void BindMethods();
  void HandleRequest(const Request& request, const Envelope& envelope);
  void HandleNotification(const Notification& notification, const Envelope& envelope);
  std::optional<RpcError> PrepareModern(RequestCtx& ctx);
  void PrepareLegacy(RequestCtx& ctx);
  void Reply(RequestCtx& ctx, Outcome outcome);
  void BroadcastListChanged(const std::string& what);

  // method handlers (server_lifecycle.cpp, server_features.cpp, tasks.cpp)
  Outcome OnInitialize(RequestCtx& ctx);
  Outcome OnPing(RequestCtx& ctx);
  Outcome OnSetLevel(RequestCtx& ctx);
  Outcome OnDiscover(RequestCtx& ctx);
  Outcome OnListen(RequestCtx& ctx);
  Outcome OnToolsList(RequestCtx& ctx);
  Outcome OnToolsCall(RequestCtx& ctx);
  Outcome OnPromptsList(RequestCtx& ctx);
  Outcome OnPromptsGet(RequestCtx& ctx);
  Outcome OnResourcesList(RequestCtx& ctx);
  Outcome OnTemplatesList(RequestCtx& ctx);
  Outcome OnResourcesRead(RequestCtx& ctx);
  Outcome OnSubscribe(RequestCtx& ctx, bool subscribe);
  Outcome OnComplete(RequestCtx& ctx);
  Outcome OnTasksGet(RequestCtx& ctx);
  Outcome OnTasksResult(RequestCtx& ctx);
  Outcome OnTasksList(RequestCtx& ctx);
  Outcome OnTasksCancel(RequestCtx& ctx);
  Outcome OnTasksUpdate(RequestCtx& ctx);

  CallSetup MakeCallSetup(RequestCtx& ctx, ClientChannel* channel) const;

  ServerOptions options_;
  std::shared_ptr<Catalog> catalog_;
  StateSigner signer_;
  std::map<std::string, Method> methods_;
  std::unique_ptr<TaskStore> tasks_;          // 2025-11-25 tasks utility
  std::unique_ptr<TaskExtension> extension_;  // 2026-07-28 tasks extension

  struct Listener {
    std::string subscription_id;
    json filter;
    std::shared_ptr<Sink> sink;
  };
  std::mutex listeners_mutex_;
  std::map<uint64_t, Listener> listeners_;
  uint64_t next_listener_ = 1;
  std::vector<std::weak_ptr<Connection>> connections_;

  WorkerPool pool_;  // last: joined first, while the rest is alive
};

}  // namespace parity::mcp
