// A client connection as the protocol sees it: the stdio process, one legacy HTTP session
// (Mcp-Session-Id), or one 2026-07-28 HTTP request. It holds the legacy handshake state,
// the requests in flight (for notifications/cancelled) and the server->client requests
// awaiting the client's response. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "mcp-server/tool.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::mcp {

// Where messages to the client go. Thread-safe; Send returns false once the peer is gone.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual bool Send(const json& message) = 0;
  // The request `id` ends without a reply (it was cancelled): a sink that waits for
  // replies (a batch, an HTTP exchange) stops waiting for it.
  virtual void NoReply(const json& id) { (void)id; }
};

struct LegacyState {
  bool initialized = false;      // initialize answered
  std::string protocol_version;  // negotiated
  json client_capabilities = json::object();
  json client_info;
  LogLevel log_level = LogLevel::kInfo;
};

class Connection {
 public:
  // `unsolicited` receives messages related to no request (list_changed, resources/updated);
  // may be null (they are dropped).
  explicit Connection(std::shared_ptr<Sink> unsolicited = nullptr) : unsolicited_(std::move(unsolicited)) {}

  LegacyState legacy() const;
  void SetLegacy(LegacyState state);
  void SetLogLevel(LogLevel level);
  void SetUnsolicitedSink(std::shared_ptr<Sink> sink);
  // Forgets the unsolicited sink if it is still `sink` (a stream that ended).
  void ClearUnsolicitedSink(const Sink* sink);
  bool SendUnsolicited(const json& message);

  std::set<std::string> subscriptions() const;
  void Subscribe(const std::string& uri);
  void Unsubscribe(const std::string& uri);

  // Requests in flight. Cancel fires the source and runs on_cancel; returns whether the id
  // was known. Finish forgets it.
  void Begin(const std::string& id_key, CancellationSource source, std::function<void()> on_cancel = {});
  bool Cancel(const std::string& id_key);
  void CancelAll();
  void Finish(const std::string& id_key);

  // A server->client request: `send` puts it on the wire; blocks until the client answers
  // (result, or its error as a Status), `cancel` fires, or `timeout`.
  Result<json> Call(const std::string& method, json params, Sink& sink, const CancellationToken& cancel,
                    std::chrono::milliseconds timeout);
  // The client's response to one of our requests; false when nobody waits for that id.
  bool Resolve(const json& id, const json& result, const json& error);

  bool closed() const { return closed_.load(); }
  // No request in flight and no stream for unsolicited messages open.
  bool Idle() const;
  // A request in flight or a client answer awaited (an open event stream alone is not).
  bool HasRequests() const;
  // No client answers will come any more: waits for them end. In-flight work continues
  // (call CancelAll to stop it).
  void Close();

 private:
  struct Waiter {
    std::condition_variable cv;
    bool done = false;
    json result, error;
  };
  struct InFlight {
    CancellationSource source;
    std::function<void()> on_cancel;
  };

  mutable std::mutex mutex_;
  LegacyState legacy_;
  std::shared_ptr<Sink> unsolicited_;
  std::set<std::string> subscriptions_;
  std::map<std::string, InFlight> in_flight_;
  std::map<std::string, std::shared_ptr<Waiter>> waiters_;
  std::atomic<bool> closed_{false};
  static std::atomic<uint64_t> next_request_id_;
};

}  // namespace parity::mcp
