#include "mcp-server/http_transport.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <map>
#include <set>

#include "mcp-server/http_admission.h"
#include "mcp-server/http_exchange.h"
#include "mcp-server/signed_state.h"

namespace parity::mcp {

namespace {

constexpr auto kFirstMessageWait = std::chrono::milliseconds(100);
constexpr auto kKeepAlive = std::chrono::seconds(2);

class NullSink : public Sink {
 public:
  bool Send(const json&) override { return true; }
};

std::string RandomSessionId() { return RandomHex(16); }

void JsonReply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpLine(body), "application/json");
}

void ErrorReply(httplib::Response& res, int status, const json& id, int code, const std::string& message) {
  JsonReply(res, status, ErrorResponse(id, RpcError{code, message, nullptr}));
}

// "host:port", "[::1]:port" or "host" -> host
std::string HostPart(std::string_view authority) {
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    return std::string(authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1));
  }
  return std::string(authority.substr(0, authority.find(':')));
}

}  // namespace

struct HttpTransport::Impl {
  HttpOptions options;
  std::unique_ptr<AdmittingServer> http;
  int bound_port = -1;
  Server* server = nullptr;
  std::set<std::string> allowed_hosts;

  struct SessionEntry {
    std::shared_ptr<Connection> connection;
    size_t token = 0;  // index into options.bearer_tokens (0 when none are configured)
    std::chrono::steady_clock::time_point last_used;
    std::weak_ptr<ExchangeSink> stream;  // its open GET event stream, if any
  };
  std::mutex sessions_mutex;
  std::map<std::string, SessionEntry> sessions;

  // The index of the request's bearer token, or nullopt when it has none that we accept.
  std::optional<size_t> TokenOf(const httplib::Request& req) const;
  // Ends idle sessions past the timeout and, when the table is still full, the least
  // recently used idle one. Returns whether a new session fits. Locked by the caller.
  bool MakeRoomLocked();

  bool AllowedHost(const std::string& host) const { return allowed_hosts.count(host) > 0; }
  httplib::Server::HandlerResponse Guard(const httplib::Request& req, httplib::Response& res);
  void Post(const httplib::Request& req, httplib::Response& res);
  void Get(const httplib::Request& req, httplib::Response& res);
  void Delete(const httplib::Request& req, httplib::Response& res);
  void Respond(const Request& request, Envelope env, bool modern, httplib::Response& res);
  void Batch(const ParsedBody& body, Envelope env, httplib::Response& res);
  void Answer(const std::shared_ptr<ExchangeSink>& sink, const std::shared_ptr<Connection>& connection, bool modern,
              httplib::Response& res);
  std::shared_ptr<Connection> Session(const httplib::Request& req, const json& id, httplib::Response& res);
};

HttpTransport::HttpTransport(HttpOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const HttpOptions& o = impl_->options;
  AdmissionLimits limits;
  limits.workers = o.threads;
  limits.max_waiting = o.max_waiting_connections;
  limits.max_idle = o.max_waiting_connections;
  limits.header_timeout_s = o.header_timeout_s;
  limits.keep_alive_s = o.keep_alive_timeout_s;
  limits.idle_timeout_s = o.idle_timeout_s;
  limits.body_timeout_s = o.body_timeout_s;
  impl_->http = std::make_unique<AdmittingServer>(limits);
  for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) impl_->allowed_hosts.insert(h);
  impl_->allowed_hosts.insert(impl_->options.host.find(':') != std::string::npos ? "[" + impl_->options.host + "]"
                                                                                  : impl_->options.host);
  for (const auto& h : impl_->options.allowed_hosts) impl_->allowed_hosts.insert(h);
}

HttpTransport::~HttpTransport() { Stop(); }

int HttpTransport::port() const { return impl_->bound_port; }
bool HttpTransport::running() const { return impl_->http->is_running(); }

Status HttpTransport::Bind() {
  if (impl_->bound_port > 0) return Status::Ok();
  auto& o = impl_->options;
  // cpp-httplib writes headers and body in two sends; without TCP_NODELAY, Nagle holds the
  // body until the client's delayed ACK (~40 ms per round trip). Must be set before binding.
  impl_->http->set_tcp_nodelay(true);
  if (o.port == 0) {
    impl_->bound_port = impl_->http->bind_to_any_port(o.host);
  } else {
    impl_->bound_port = impl_->http->bind_to_port(o.host, o.port) ? o.port : -1;
  }
  if (impl_->bound_port <= 0) {
    return Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port))
        .WithHint("pick another port, or check that the address is local");
  }
  return Status::Ok();
}

void HttpTransport::Stop() {
  impl_->http->stop();
  std::lock_guard lock(impl_->sessions_mutex);
  for (auto& [id, session] : impl_->sessions) {
    session.connection->Close();
    session.connection->CancelAll();
  }
  impl_->sessions.clear();
}

Status HttpTransport::Serve(Server& server) {
  PARITY_RETURN_IF_ERROR(Bind());
  Impl& im = *impl_;
  im.server = &server;
  im.http->set_payload_max_length(im.options.max_body_bytes);
  im.http->set_read_timeout(im.options.read_timeout_s, 0);
  im.http->set_write_timeout(im.options.write_timeout_s, 0);
  im.http->set_pre_routing_handler([&im](const httplib::Request& req, httplib::Response& res) {
    return im.Guard(req, res);
  });
  im.http->Post(im.options.path, [&im](const httplib::Request& req, httplib::Response& res) { im.Post(req, res); });
  im.http->Get(im.options.path, [&im](const httplib::Request& req, httplib::Response& res) { im.Get(req, res); });
  im.http->Delete(im.options.path, [&im](const httplib::Request& req, httplib::Response& res) { im.Delete(req, res); });
  if (!im.http->listen_after_bind()) return Unavailable("the HTTP server stopped with an error");
  return Status::Ok();
}

httplib::Server::HandlerResponse HttpTransport::Impl::Guard(const httplib::Request& req, httplib::Response& res) {
  using R = httplib::Server::HandlerResponse;
  // Refused before its body is read: the connection closes after the answer (the unread
  // body must not be taken for the next request), and the client is told so.
  auto refuse = [&res] { res.set_header("Connection", "close"); };
  // DNS rebinding: a page on a foreign name that resolves to 127.0.0.1 must not reach us.
  if (!AllowedHost(HostPart(req.get_header_value("Host")))) {
    refuse();
    ErrorReply(res, 403, nullptr, rpc::kInvalidRequest, "Forbidden: Host header not allowed");
    return R::Handled;
  }
  if (req.has_header("Origin")) {
    std::string origin = req.get_header_value("Origin");
    size_t scheme = origin.find("://");
    std::string host = scheme == std::string::npos ? "" : HostPart(origin.substr(scheme + 3));
    if (!AllowedHost(host)) {
      refuse();
      ErrorReply(res, 403, nullptr, rpc::kInvalidRequest, "Forbidden: Origin not allowed");
      return R::Handled;
    }
  }
  if (!options.bearer_tokens.empty()) {
    if (!TokenOf(req)) {
      std::string got = req.get_header_value("Authorization");
      res.set_header("WWW-Authenticate",
                     got.empty() ? "Bearer realm=\"parity\"" : "Bearer realm=\"parity\", error=\"invalid_token\"");
      refuse();
      ErrorReply(res, 401, nullptr, rpc::kInvalidRequest, "Unauthorized: a valid bearer token is required");
      return R::Handled;
    }
  }
  return R::Unhandled;
}

std::optional<size_t> HttpTransport::Impl::TokenOf(const httplib::Request& req) const {
  if (options.bearer_tokens.empty()) return size_t{0};
  std::string got = req.get_header_value("Authorization");
  std::optional<size_t> match;
  for (size_t i = 0; i < options.bearer_tokens.size(); ++i) {  // every token compared: no early exit
    std::string expected = "Bearer " + options.bearer_tokens[i];
    if (got.size() == expected.size() && CRYPTO_memcmp(got.data(), expected.data(), got.size()) == 0) match = i;
  }
  return match;
}

bool HttpTransport::Impl::MakeRoomLocked() {
  auto now = std::chrono::steady_clock::now();
  auto idle_limit = std::chrono::seconds(options.session_idle_timeout_s);
  std::vector<std::shared_ptr<Connection>> ended;
  for (auto it = sessions.begin(); it != sessions.end();) {
    if (it->second.connection->Idle() && now - it->second.last_used > idle_limit) {
      ended.push_back(it->second.connection);
      it = sessions.erase(it);
    } else {
      ++it;
    }
  }
  if (sessions.size() >= options.max_sessions) {
    // Full: the least recently used session without a request in flight ends. Its event
    // stream alone does not hold it: a client that went away without DELETE leaves its
    // stream open until a write fails, and must not lock new clients out meanwhile.
    auto lru = sessions.end();
    for (auto it = sessions.begin(); it != sessions.end(); ++it) {
      if (!it->second.connection->HasRequests() && (lru == sessions.end() || it->second.last_used < lru->second.last_used)) {
        lru = it;
      }
    }
    if (lru != sessions.end()) {
      if (auto stream = lru->second.stream.lock()) stream->Close();
      ended.push_back(lru->second.connection);
      sessions.erase(lru);
    }
  }
  for (auto& c : ended) c->Close();
  return sessions.size() < options.max_sessions;
}

std::shared_ptr<Connection> HttpTransport::Impl::Session(const httplib::Request& req, const json& id,
                                                         httplib::Response& res) {
  if (!req.has_header("Mcp-Session-Id")) {
    ErrorReply(res, 400, id, rpc::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
    return nullptr;
  }
  std::string sid = req.get_header_value("Mcp-Session-Id");
  auto token = TokenOf(req);
  std::lock_guard lock(sessions_mutex);
  auto it = sessions.find(sid);
  // Another client's token does not open this session: answered as an unknown one.
  if (it == sessions.end() || !token || *token != it->second.token) {
    ErrorReply(res, 404, id, rpc::kInvalidRequest, "Session not found (ended or unknown); initialize again");
    return nullptr;
  }
  it->second.last_used = std::chrono::steady_clock::now();
  return it->second.connection;
}

void HttpTransport::Impl::Post(const httplib::Request& req, httplib::Response& res) {
  std::optional<std::string> header_version;
  if (req.has_header("MCP-Protocol-Version")) header_version = TrimOws(req.get_header_value("MCP-Protocol-Version"));
  ParsedBody body = ParseBody(req.body, options.max_body_bytes);
  if (!body.batch) {
    if (const auto* error = std::get_if<ParsedError>(&body.messages.front())) {
      return JsonReply(res, 400, ErrorResponse(error->id, error->error));
    }
  }
  const Message* message = body.batch ? nullptr : &std::get<Message>(body.messages.front());
  const Request* request = message ? std::get_if<Request>(message) : nullptr;
  bool modern = request ? Server::IsModernRequest(*request, header_version)
                        : header_version && IsModernVersion(*header_version);
  json id = request ? request->id : json();

  if (modern) {
    if (body.batch) return ErrorReply(res, 400, nullptr, rpc::kInvalidRequest, "batches are not part of 2026-07-28");
    auto connection = std::make_shared<Connection>();  // stateless: one per request
    if (!request) {
      server->Handle(*message, Envelope{connection, std::make_shared<NullSink>(), header_version, true});
      res.status = 202;
      return;
    }
    if (auto mismatch = CheckStandardHeaders(req, *request, server->catalog())) {
      return JsonReply(res, 400, ErrorResponse(id, *mismatch));
    }
    return Respond(*request, Envelope{connection, nullptr, header_version, true}, true, res);
  }

  if (header_version) {
    const auto& supported = SupportedLegacyVersions();
    if (std::find(supported.begin(), supported.end(), *header_version) == supported.end()) {
      return ErrorReply(res, 400, id, rpc::kInvalidRequest,
                        "Bad Request: unsupported MCP-Protocol-Version \"" + *header_version + "\"");
    }
  }
  if (request && request->method == "initialize") {
    auto connection = std::make_shared<Connection>();
    std::string sid = RandomSessionId();
    {
      std::lock_guard lock(sessions_mutex);
      if (!MakeRoomLocked()) {
        res.set_header("Retry-After", "5");
        return ErrorReply(res, 503, id, rpc::kServerBusy,
                          "every one of the " + std::to_string(options.max_sessions) +
                              " sessions has a request in flight; retry later");
      }
      sessions[sid] = SessionEntry{connection, TokenOf(req).value_or(0), std::chrono::steady_clock::now(), {}};
    }
    server->AddConnection(connection);
    res.set_header("Mcp-Session-Id", sid);
    return Respond(*request, Envelope{connection, nullptr, header_version, true}, false, res);
  }
  auto connection = Session(req, id, res);
  if (!connection) return;
  Envelope env{connection, nullptr, header_version, true};
  if (body.batch) return Batch(body, env, res);
  if (!request) {
    env.sink = std::make_shared<NullSink>();
    server->Handle(*message, env);
    res.status = 202;
    return;
  }
  Respond(*request, env, false, res);
}

void HttpTransport::Impl::Respond(const Request& request, Envelope env, bool modern, httplib::Response& res) {
  auto sink = std::make_shared<ExchangeSink>(request.id);
  env.sink = sink;
  server->Handle(request, env);
  Answer(sink, env.connection, modern, res);
}

// A 2025-03-26 batch: the array of replies as JSON when it is ready at once, otherwise an
// SSE stream that carries what its handlers send (an elicitation/create the client must
// answer with a new POST, progress) and then the array.
void HttpTransport::Impl::Batch(const ParsedBody& body, Envelope env, httplib::Response& res) {
  if (env.connection->legacy().protocol_version != "2025-03-26") {
    return ErrorReply(res, 400, nullptr, rpc::kInvalidRequest,
                      "invalid request: JSON-RPC batches are accepted only on a 2025-03-26 session");
  }
  auto sink = std::make_shared<ExchangeSink>(nullptr, /*batch=*/true);
  env.sink = sink;
  server->HandleBatch(body, env);
  Answer(sink, env.connection, false, res);
}

void HttpTransport::Impl::Answer(const std::shared_ptr<ExchangeSink>& sink, const std::shared_ptr<Connection>& connection,
                                 bool modern, httplib::Response& res) {
  auto first = sink->Pop(kFirstMessageWait);
  if (first && sink->IsFinal(*first)) {
    int status = 200;
    if (first->is_object() && first->contains("error")) {
      RpcError e{(*first)["error"].value("code", rpc::kInternalError), "", nullptr};
      status = HttpStatusFor(e, modern);
      if (status == 503) res.set_header("Retry-After", "1");
    }
    return JsonReply(res, status, *first);
  }
  if (!first && sink->ended()) {  // cancelled before anything was sent: no reply to give
    res.status = 202;
    return;
  }
  // Notifications (or server->client requests) come first, or the reply takes a while:
  // stream, so they reach the client while the request runs.
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  auto pending = std::make_shared<std::optional<json>>(std::move(first));
  res.set_chunked_content_provider(
      "text/event-stream",
      [sink, pending](size_t, httplib::DataSink& out) {
        std::optional<json> message;
        if (*pending) {
          message = std::move(*pending);
          pending->reset();
        } else {
          message = sink->Pop(kKeepAlive);
        }
        if (!message) {
          if (sink->ended()) {  // cancelled: the stream ends without a reply
            out.done();
            return true;
          }
          static const char kComment[] = ": keepalive\n\n";
          return out.write(kComment, sizeof kComment - 1);  // false when the client left
        }
        std::string event = "event: message\ndata: " + DumpLine(*message) + "\n\n";
        if (!out.write(event.data(), event.size())) return false;
        if (sink->IsFinal(*message)) out.done();
        return true;
      },
      [sink, connection, modern](bool success) {
        sink->Close();
        // 2026-07-28: closing the response stream cancels the request. Legacy: a
        // disconnect is not a cancellation, but nobody is left to answer.
        if (!success && modern) connection->CancelAll();
      });
}

// The legacy standalone stream: list_changed and resources/updated for this session.
void HttpTransport::Impl::Get(const httplib::Request& req, httplib::Response& res) {
  bool modern = req.has_header("MCP-Protocol-Version") &&
                IsModernVersion(TrimOws(req.get_header_value("MCP-Protocol-Version")));
  if (modern || req.get_header_value("Accept").find("text/event-stream") == std::string::npos) {
    res.set_header("Allow", "POST, DELETE");
    return ErrorReply(res, 405, nullptr, rpc::kInvalidRequest,
                      "GET opens a 2025-11-25 session's event stream (Accept: text/event-stream) only");
  }
  auto connection = Session(req, nullptr, res);
  if (!connection) return;
  auto sink = std::make_shared<ExchangeSink>(nullptr);  // never "final": open until the client leaves
  connection->SetUnsolicitedSink(sink);
  {
    std::lock_guard lock(sessions_mutex);
    auto it = sessions.find(req.get_header_value("Mcp-Session-Id"));
    if (it != sessions.end()) it->second.stream = sink;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream",
      [sink](size_t, httplib::DataSink& out) {
        auto message = sink->Pop(kKeepAlive);
        if (!message) {
          if (sink->closed()) return false;  // the session ended: the stream ends with it
          static const char kComment[] = ": keepalive\n\n";
          return out.write(kComment, sizeof kComment - 1);
        }
        std::string event = "event: message\ndata: " + DumpLine(*message) + "\n\n";
        return out.write(event.data(), event.size());
      },
      [sink, connection](bool) {
        sink->Close();
        connection->ClearUnsolicitedSink(sink.get());
      });
}

void HttpTransport::Impl::Delete(const httplib::Request& req, httplib::Response& res) {
  if (req.has_header("MCP-Protocol-Version") && IsModernVersion(TrimOws(req.get_header_value("MCP-Protocol-Version")))) {
    res.set_header("Allow", "POST");
    return ErrorReply(res, 405, nullptr, rpc::kInvalidRequest, "2026-07-28 has no sessions to end");
  }
  auto connection = Session(req, nullptr, res);
  if (!connection) return;
  {
    std::lock_guard lock(sessions_mutex);
    sessions.erase(req.get_header_value("Mcp-Session-Id"));
  }
  connection->Close();
  connection->CancelAll();
  res.status = 200;
}

}  // namespace parity::mcp
