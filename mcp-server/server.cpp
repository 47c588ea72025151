#include "mcp-server/server.h"

#include <thread>

#include "mcp-server/batch_sink.h"
#include "mcp-server/server_internal.h"
#include "mcp-server/task_extension.h"
#include "mcp-server/tasks.h"
#include "support/version.h"

namespace parity::mcp {

const std::vector<std::string>& SupportedLegacyVersions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

bool IsModernVersion(std::string_view version) { return version >= std::string_view(kModernVersion); }

Server::Server(ServerOptions options, std::shared_ptr<Catalog> catalog)
    : options_(std::move(options)),
      catalog_(std::move(catalog)),
      tasks_(std::make_unique<TaskStore>()),
      extension_(std::make_unique<TaskExtension>()),
      pool_(options_.worker_threads, options_.max_queued) {
  if (options_.version.empty()) options_.version = PARITY_VERSION;
  BindMethods();
  catalog_->tools.OnChange([this] { BroadcastListChanged("tools"); });
  catalog_->prompts.OnChange([this] { BroadcastListChanged("prompts"); });
  catalog_->resources.OnChange([this] { BroadcastListChanged("resources"); });
  catalog_->templates.OnChange([this] { BroadcastListChanged("resources"); });
}

Server::~Server() {
  // Handlers still running reach for the server: wait for them before members go.
  pool_.WaitIdle();
}

void Server::BindMethods() {
  auto bind = [this](const char* name, Outcome (Server::*fn)(RequestCtx&), bool legacy, bool modern, bool worker) {
    methods_[name] = Method{[this, fn](RequestCtx& ctx) { return (this->*fn)(ctx); }, legacy, modern, worker};
  };
  // clang-format off
  //    method                       handler                    legacy modern worker
  bind("initialize",               &Server::OnInitialize,      true,  false, false);
  bind("ping",                     &Server::OnPing,            true,  false, false);
  bind("logging/setLevel",         &Server::OnSetLevel,        true,  false, false);
  bind("server/discover",          &Server::OnDiscover,        false, true,  false);
  bind("subscriptions/listen",     &Server::OnListen,          false, true,  false);
  bind("tools/list",               &Server::OnToolsList,       true,  true,  false);
  bind("tools/call",               &Server::OnToolsCall,       true,  true,  true);
  bind("prompts/list",             &Server::OnPromptsList,     true,  true,  false);
  bind("prompts/get",              &Server::OnPromptsGet,      true,  true,  true);
  bind("resources/list",           &Server::OnResourcesList,   true,  true,  false);
  bind("resources/templates/list", &Server::OnTemplatesList,   true,  true,  false);
  bind("resources/read",           &Server::OnResourcesRead,   true,  true,  true);
  bind("completion/complete",      &Server::OnComplete,        true,  true,  false);
  bind("tasks/get",                &Server::OnTasksGet,        true,  true,  false);
  bind("tasks/result",             &Server::OnTasksResult,     true,  false, true);
  bind("tasks/list",               &Server::OnTasksList,       true,  false, false);
  bind("tasks/cancel",             &Server::OnTasksCancel,     true,  true,  false);
  bind("tasks/update",             &Server::OnTasksUpdate,     false, true,  false);
  // clang-format on
  methods_["resources/subscribe"] = Method{[this](RequestCtx& c) { return OnSubscribe(c, true); }, true, false, false};
  methods_["resources/unsubscribe"] = Method{[this](RequestCtx& c) { return OnSubscribe(c, false); }, true, false, false};
}

bool Server::IsModernRequest(const Request& request, const std::optional<std::string>& header_version) {
  if (request.params.is_object()) {
    auto meta = request.params.find("_meta");
    if (meta != request.params.end() && meta->is_object() &&
        meta->contains("io.modelcontextprotocol/protocolVersion")) {
      return true;
    }
  }
  if (header_version && IsModernVersion(*header_version)) return true;
  return request.method == "server/discover" || request.method == "subscriptions/listen";
}

void Server::HandleRaw(std::string_view raw, const Envelope& env, size_t max_bytes) {
  ParsedBody body = ParseBody(raw, max_bytes);
  if (body.batch) return HandleBatch(body, env);
  const auto& parsed = body.messages.front();
  if (const auto* error = std::get_if<ParsedError>(&parsed)) {
    env.sink->Send(ErrorResponse(error->id, error->error));
  } else {
    Handle(std::get<Message>(parsed), env);
  }
}

void Server::HandleBatch(const ParsedBody& body, const Envelope& env) {
  if (env.connection->legacy().protocol_version != "2025-03-26") {
    env.sink->Send(ErrorResponse(nullptr, RpcError{rpc::kInvalidRequest,
        "invalid request: JSON-RPC batches are accepted only on a connection that negotiated 2025-03-26",
        nullptr}));
    return;
  }
  json early = json::array();
  std::vector<json> ids;
  for (const auto& parsed : body.messages) {
    if (const auto* error = std::get_if<ParsedError>(&parsed)) {
      early.push_back(ErrorResponse(error->id, error->error));
    } else if (const auto* request = std::get_if<Request>(&std::get<Message>(parsed))) {
      ids.push_back(request->id);
    }
  }
  auto batch = std::make_shared<BatchSink>(env.sink, std::move(ids), std::move(early));
  Envelope batch_env = env;
  batch_env.sink = batch;
  for (const auto& parsed : body.messages) {
    if (const auto* message = std::get_if<Message>(&parsed)) Handle(*message, batch_env);
  }
  batch->Seal();
}

void Server::Handle(const Message& message, const Envelope& env) {
  if (const auto* request = std::get_if<Request>(&message)) return HandleRequest(*request, env);
  if (const auto* notification = std::get_if<Notification>(&message)) return HandleNotification(*notification, env);
  const auto& response = std::get<Response>(message);
  env.connection->Resolve(response.id, response.result, response.error);  // unknown ids are ignored
}

std::optional<RpcError> Server::PrepareModern(RequestCtx& ctx) {
  const json& meta = ctx.meta;
  const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
  const char* kCapsKey = "io.modelcontextprotocol/clientCapabilities";
  if (!meta.contains(kVersionKey) || !meta[kVersionKey].is_string()) {
    return RpcError{rpc::kInvalidParams,
                    std::string("params._meta[\"") + kVersionKey + "\"]: required string in the 2026-07-28 era", nullptr};
  }
  if (!meta.contains(kCapsKey) || !meta[kCapsKey].is_object()) {
    return RpcError{rpc::kInvalidParams,
                    std::string("params._meta[\"") + kCapsKey + "\"]: required object in the 2026-07-28 era", nullptr};
  }
  std::string version = meta[kVersionKey];
  if (ctx.env.header_version && *ctx.env.header_version != version) {
    return RpcError{rpc::kHeaderMismatch,
                    "MCP-Protocol-Version header \"" + *ctx.env.header_version +
                        "\" does not match params._meta protocolVersion \"" + version + "\"",
                    nullptr};
  }
  if (version != kModernVersion) {
    return RpcError{rpc::kUnsupportedVersion, "Unsupported protocol version",
                    {{"supported", json::array({kModernVersion})}, {"requested", version}}};
  }
  ctx.protocol_version = version;
  ctx.client_capabilities = meta[kCapsKey];
  if (meta.contains("io.modelcontextprotocol/logLevel")) {
    const json& level = meta["io.modelcontextprotocol/logLevel"];
    if (!level.is_string() || !ParseLogLevel(level.get<std::string>())) {
      return RpcError{rpc::kInvalidParams, "params._meta[\"io.modelcontextprotocol/logLevel\"]: expected one of "
                                           "debug, info, notice, warning, error, critical, alert, emergency", nullptr};
    }
    ctx.log_level = ParseLogLevel(level.get<std::string>());
  }
  return std::nullopt;
}

void Server::PrepareLegacy(RequestCtx& ctx) {
  LegacyState state = ctx.env.connection->legacy();
  ctx.protocol_version = !state.protocol_version.empty() ? state.protocol_version
                         : ctx.env.header_version        ? *ctx.env.header_version
                                                         : "2025-03-26";
  ctx.client_capabilities = state.client_capabilities;
  ctx.log_level = state.log_level;
}

void Server::HandleRequest(const Request& request, const Envelope& env) {
  auto ctx = std::make_shared<RequestCtx>();
  ctx->id = request.id;
  ctx->id_key = IdKey(request.id);
  ctx->method = request.method;
  ctx->params = request.params.is_object() ? request.params : json::object();
  ctx->meta = ctx->params.contains("_meta") && ctx->params["_meta"].is_object() ? ctx->params["_meta"] : json::object();
  ctx->env = env;
  ctx->modern = IsModernRequest(request, env.header_version);
  if (ctx->modern) {
    if (auto error = PrepareModern(*ctx)) return Reply(*ctx, *error);
  } else {
    PrepareLegacy(*ctx);
  }
  auto it = methods_.find(request.method);
  if (it == methods_.end() || !(ctx->modern ? it->second.modern : it->second.legacy)) {
    std::string why = it == methods_.end() ? "" : ctx->modern ? " (not part of 2026-07-28)" : " (2026-07-28 only)";
    return Reply(*ctx, RpcError{rpc::kMethodNotFound, "Method not found: " + request.method + why, nullptr});
  }
  const Method& method = it->second;
  env.connection->Begin(ctx->id_key, ctx->cancel);
  if (!method.on_worker) return Reply(*ctx, method.handler(*ctx));
  bool queued = pool_.TrySubmit([this, ctx, handler = method.handler] {
    // Cancelled while it waited in the queue: the handler never starts.
    if (ctx->cancel.cancelled()) {
      return Reply(*ctx, RpcError{rpc::kInternalError,
                                  "not started: the server is shutting down (or the request was cancelled) while it "
                                  "waited for a worker", nullptr});
    }
    Reply(*ctx, handler(*ctx));
  });
  if (!queued) {
    Reply(*ctx, RpcError{rpc::kServerBusy, "server busy, retry",
                         {{"retryable", true}, {"workers", options_.worker_threads}}});
  }
}

void Server::Reply(RequestCtx& ctx, Outcome outcome) {
  if (ctx.deferred) return;
  ctx.env.connection->Finish(ctx.id_key);
  if (ctx.cancel.cancelled()) {  // a cancelled request gets no reply
    ctx.env.sink->NoReply(ctx.id);
    return;
  }
  if (auto* error = std::get_if<RpcError>(&outcome)) {
    ctx.env.sink->Send(ErrorResponse(ctx.id, *error));
    return;
  }
  json& result = std::get<json>(outcome);
  if (ctx.modern) {
    if (!result.contains("resultType")) result["resultType"] = "complete";
    result["_meta"]["io.modelcontextprotocol/serverInfo"] = ServerInfo();
  }
  ctx.env.sink->Send(ResultResponse(ctx.id, std::move(result)));
}

void Server::HandleNotification(const Notification& n, const Envelope& env) {
  if (n.method == "notifications/initialized") {
    LegacyState state = env.connection->legacy();
    state.initialized = true;
    env.connection->SetLegacy(state);
  } else if (n.method == "notifications/cancelled") {
    if (n.params.is_object() && n.params.contains("requestId")) {
      const json& id = n.params["requestId"];
      if (id.is_string() || id.is_number_integer()) env.connection->Cancel(IdKey(id));
    }
  }
  // Other notifications (roots/list_changed, progress from the client) need no action.
}

void Server::AddConnection(const std::shared_ptr<Connection>& connection) {
  std::lock_guard lock(listeners_mutex_);
  std::erase_if(connections_, [](const auto& w) { return w.expired(); });
  connections_.push_back(connection);
}

void Server::BroadcastListChanged(const std::string& what) {
  std::string method = "notifications/" + what + "/list_changed";
  std::string filter_key = what + "ListChanged";
  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<Listener> listeners;
  {
    std::lock_guard lock(listeners_mutex_);
    for (auto& w : connections_) {
      if (auto c = w.lock()) connections.push_back(c);
    }
    for (auto& [id, l] : listeners_) listeners.push_back(l);
  }
  for (auto& c : connections) c->SendUnsolicited({{"jsonrpc", "2.0"}, {"method", method}});
  for (auto& l : listeners) {
    if (!l.filter.value(filter_key, false)) continue;
    l.sink->Send({{"jsonrpc", "2.0"}, {"method", method},
                  {"params", {{"_meta", {{"io.modelcontextprotocol/subscriptionId", l.subscription_id}}}}}});
  }
}

void Server::NotifyResourceUpdated(const std::string& uri) {
  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<Listener> listeners;
  {
    std::lock_guard lock(listeners_mutex_);
    for (auto& w : connections_) {
      if (auto c = w.lock()) connections.push_back(c);
    }
    for (auto& [id, l] : listeners_) listeners.push_back(l);
  }
  json message = {{"jsonrpc", "2.0"}, {"method", "notifications/resources/updated"}, {"params", {{"uri", uri}}}};
  for (auto& c : connections) {
    if (c->subscriptions().count(uri)) c->SendUnsolicited(message);
  }
  for (auto& l : listeners) {
    const json subs = l.filter.value("resourceSubscriptions", json::array());
    if (!subs.is_array() || std::find(subs.begin(), subs.end(), json(uri)) == subs.end()) continue;
    json m = message;
    m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] = l.subscription_id;
    l.sink->Send(m);
  }
}

void Server::WaitIdle() { pool_.WaitIdle(); }
bool Server::WaitIdleFor(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (!pool_.WaitIdleFor(timeout)) return false;
  for (;;) {  // task threads: polled, they have no pool to wait on
    if (tasks_->Running() == 0 && extension_->Running() == 0) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Server::CancelTasks() {
  tasks_->CancelAll();
  extension_->CancelAll();
}

json Server::ServerInfo() const {
  json info = {{"name", options_.name}, {"version", options_.version}};
  if (!options_.title.empty()) info["title"] = options_.title;
  return info;
}

json Server::Capabilities(bool modern) const {
  json caps = {{"tools", {{"listChanged", true}}},
               {"prompts", {{"listChanged", true}}},
               {"resources", {{"subscribe", true}, {"listChanged", true}}},
               {"completions", json::object()}};
  if (!modern) {
    caps["logging"] = json::object();
    caps["tasks"] = {{"list", json::object()}, {"cancel", json::object()},
                     {"requests", {{"tools", {{"call", json::object()}}}}}};
  } else {
    caps["extensions"] = {{kTasksExtension, json::object()}};
  }
  return caps;
}

CallSetup Server::MakeCallSetup(RequestCtx& ctx, ClientChannel* channel) const {
  CallSetup setup;
  setup.cancel = ctx.cancel.token();
  setup.progress_token = ctx.meta.contains("progressToken") ? ctx.meta["progressToken"] : json();
  setup.log_level = ctx.log_level;
  setup.client_capabilities = ctx.client_capabilities;
  setup.modern = ctx.modern;
  setup.live_requests = !ctx.modern;
  setup.channel = channel;
  setup.report_dir = options_.report_dir;
  setup.min_progress_interval = options_.min_progress_interval;
  setup.policy = options_.policy;
  return setup;
}

Result<size_t> DecodeCursor(const json& params) {
  if (!params.contains("cursor") || params["cursor"].is_null()) return size_t{0};
  if (!params["cursor"].is_string()) return InvalidArgument("params.cursor: expected string");
  auto text = Base64UrlDecode(params["cursor"].get<std::string>());
  if (!text.ok() || text->rfind("o:", 0) != 0) return InvalidArgument("params.cursor: not a cursor this server issued");
  try {
    return static_cast<size_t>(std::stoull(text->substr(2)));
  } catch (...) {
    return InvalidArgument("params.cursor: not a cursor this server issued");
  }
}

std::string EncodeCursor(size_t offset) { return Base64UrlEncode("o:" + std::to_string(offset)); }

}  // namespace parity::mcp
