// Streamable HTTP on cpp-httplib: one endpoint (default /mcp).
//  POST  one JSON-RPC message (an array only on a 2025-03-26 session); notifications and
//        responses get 202; a request gets application/json when its reply is the first
//        message ready, otherwise an SSE stream carrying its progress, log messages and
//        (legacy era) server->client requests, then the reply. The client answers those
//        requests with a new POST (202).
//  GET   a 2025-11-25 session's standalone SSE stream (list_changed, resources/updated);
//        405 in the 2026-07-28 era (subscriptions/listen replaces it).
//  DELETE ends a legacy session (then 404 for it); 405 in the 2026-07-28 era.
// Legacy sessions: Mcp-Session-Id issued on initialize; 400 without it, 404 when unknown
// or ended. 2026-07-28 requests are stateless, Mcp-Method/Mcp-Name/Mcp-Param-* checked
// against the body (-32020). Security: loopback bind by default, Host and Origin
// validated (403), bearer tokens (401 + WWW-Authenticate; constant-time compare; required
// by `parity serve` beyond loopback), body limit (413), read/write timeouts, a bounded
// connection thread pool; legacy sessions bound to their token, expiring when idle.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcp-server/transport.h"

namespace parity::mcp {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (see HttpTransport::port())
  std::string path = "/mcp";
  // Accepted bearer tokens (empty: none required, loopback only). A legacy session is
  // bound to the token that opened it: another token gets 404 for it.
  std::vector<std::string> bearer_tokens;
  std::vector<std::string> allowed_hosts;  // besides loopback names and `host`
  size_t max_body_bytes = 4u << 20;
  size_t threads = 64;  // > worker threads + queue: answers to elicitations find a thread
  // Legacy sessions: one idle (no request in flight, no open stream) longer than the
  // timeout is ended; a full table ends its least recently used idle session to admit a
  // new one, so sessions a client never DELETEs cannot lock new clients out.
  size_t max_sessions = 1024;
  int session_idle_timeout_s = 3600;
  int read_timeout_s = 30;   // one read of a request body
  int write_timeout_s = 30;
  // Connections wait without a thread until their request header is complete
  // (mcp-server/http_admission.h): at most this many at a time, each for at most
  // header_timeout_s; between requests a kept-alive connection is kept idle_timeout_s
  // (clients are told keep_alive_timeout_s, so they stop reusing it well before).
  size_t max_waiting_connections = 256;
  int header_timeout_s = 10;
  int body_timeout_s = 60;   // a whole request body
  int keep_alive_timeout_s = 5;
  int idle_timeout_s = 60;
};

class HttpTransport : public Transport {
 public:
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport() override;

  // Binds the socket (so port() is known) without serving yet.
  Status Bind();
  Status Serve(Server& server) override;  // binds first when Bind was not called
  void Stop() override;
  int port() const;
  bool running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Strict RFC 4648 base64 (with padding), for =?base64?...?= header values.
std::optional<std::string> DecodeBase64Strict(std::string_view text);

}  // namespace parity::mcp
