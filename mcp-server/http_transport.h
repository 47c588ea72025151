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
// validated (403), optional bearer token (401 + WWW-Authenticate; constant-time compare),
// body limit (413), read/write timeouts, a bounded connection thread pool.
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
  std::optional<std::string> bearer_token;
  std::vector<std::string> allowed_hosts;  // besides loopback names and `host`
  size_t max_body_bytes = 4u << 20;
  size_t threads = 64;  // > worker threads + queue: answers to elicitations find a thread
  size_t max_sessions = 1024;
  int read_timeout_s = 30;
  int write_timeout_s = 30;
  // How long an idle keep-alive connection is kept. cpp-httplib 0.11 waits this long on such
  // a connection before it notices stop(), so it is also how long a SIGTERM takes to end
  // `serve --http` after a client's last request (was its default, 5 s).
  int keep_alive_timeout_s = 1;
};

class HttpTransport : public Transport {
 public:
  explicit HttpTransport(HttpOptions options);
  ~HttpTransport() override;

  // Binds the socket (so port() is known) without serving yet. Virtual, like the rest,
  // so the parity binary can drive a transport made by parity-http.so without linking
  // this class (mcp-server/http_module.h).
  virtual Status Bind();
  Status Serve(Server& server) override;  // binds first when Bind was not called
  void Stop() override;
  virtual int port() const;
  virtual bool running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Strict RFC 4648 base64 (with padding), for =?base64?...?= header values.
std::optional<std::string> DecodeBase64Strict(std::string_view text);

}  // namespace parity::mcp
