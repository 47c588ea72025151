// Internal to the HTTP transport: the sink of one POST exchange (a queue between the
// handler threads and the HTTP connection thread), and the 2026-07-28 header checks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include <httplib.h>

#include "mcp-server/server.h"

namespace parity::mcp {

class ExchangeSink : public Sink {
 public:
  // One request's exchange, or (batch) a batch's, whose reply is the array of replies.
  explicit ExchangeSink(json request_id, bool batch = false) : request_id_(std::move(request_id)), batch_(batch) {}
  bool Send(const json& message) override;
  void NoReply(const json& id) override;
  // The next message, waiting up to `wait`; nullopt on timeout or once closed and drained.
  std::optional<json> Pop(std::chrono::milliseconds wait);
  // Whether `message` is the reply to this exchange's request.
  bool IsFinal(const json& message) const;
  // The request ended without a reply (cancelled) and everything sent before is drained.
  bool ended();
  void Close();  // the peer went away: further Sends fail
  bool closed();

 private:
  json request_id_;
  bool batch_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<json> queue_;
  bool closed_ = false, no_reply_ = false;
};

// Mcp-Method / Mcp-Name / Mcp-Param-* against the body (2026-07-28 HTTP); nullopt when
// they agree.
std::optional<RpcError> CheckStandardHeaders(const httplib::Request& http, const Request& request,
                                             const Catalog& catalog);

std::string TrimOws(std::string_view text);

}  // namespace parity::mcp
