#include "mcp-server/call_context.h"

namespace parity::mcp {

namespace {

constexpr const char* kLevelNames[] = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"};

std::string CapabilityFor(const std::string& method) {
  if (method == "elicitation/create") return "elicitation";
  if (method == "sampling/createMessage") return "sampling";
  return "roots";
}

}  // namespace

const char* LogLevelName(LogLevel level) { return kLevelNames[static_cast<int>(level)]; }

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (int i = 0; i < 8; ++i) {
    if (name == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

Result<ElicitAnswer> ParseElicitAnswer(const json& r) {
  if (!r.is_object() || !r.contains("action") || !r["action"].is_string()) {
    return InvalidArgument("elicitation response: expected an object with \"action\"");
  }
  ElicitAnswer a;
  std::string action = r["action"];
  if (action == "accept") a.action = ElicitAnswer::Action::kAccept;
  else if (action == "decline") a.action = ElicitAnswer::Action::kDecline;
  else if (action == "cancel") a.action = ElicitAnswer::Action::kCancel;
  else return InvalidArgument("elicitation response.action: expected accept, decline or cancel, got \"" + action + "\"");
  if (a.action == ElicitAnswer::Action::kAccept) {
    a.content = r.value("content", json::object());
    if (!a.content.is_object()) return InvalidArgument("elicitation response.content: expected object");
  }
  return a;
}

CallContext::CallContext(CallSetup setup) : setup_(std::move(setup)), answers_(setup_.answers) {
  if (!answers_.is_object()) answers_ = json::object();
}

void CallContext::RunInBackground(std::string_view status_message) {
  if (setup_.task && !setup_.task->detached()) setup_.task->Detach(status_message);
}

void CallContext::Progress(double done, std::optional<double> total, std::string_view message) {
  if (setup_.task && setup_.task->detached()) {  // the request was answered with a task
    if (!setup_.cancel.cancelled()) setup_.task->Progress(done, total, message);
    return;
  }
  if (setup_.progress_token.is_null() || !setup_.channel) return;
  if (setup_.cancel.cancelled()) return;  // nothing about a cancelled request goes out after the cancel
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (last_progress_ && done <= *last_progress_) return;  // must increase
    bool final = total && done >= *total;
    if (last_progress_ && !final && now - last_progress_time_ < setup_.min_progress_interval) return;
    last_progress_ = done;
    last_progress_time_ = now;
  }
  json params = {{"progressToken", setup_.progress_token}, {"progress", done}};
  if (total) params["total"] = *total;
  if (!message.empty()) params["message"] = std::string(message);
  setup_.channel->Notify("notifications/progress", std::move(params));
}

void CallContext::Log(LogLevel level, std::string_view logger, const json& data) {
  if (!setup_.log_level || level < *setup_.log_level || !setup_.channel) return;
  if (setup_.task && setup_.task->detached()) return;  // no request left to carry it
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
  }
  json params = {{"level", LogLevelName(level)}, {"data", data}};
  if (!logger.empty()) params["logger"] = std::string(logger);
  setup_.channel->Notify("notifications/message", std::move(params));
}

bool CallContext::Declared(const std::string& capability) const {
  return setup_.client_capabilities.is_object() && setup_.client_capabilities.contains(capability);
}

// Only what the client declared: a 2025-11-25 client without the capability must not get
// elicitation/create (Elicit then falls back to the confirmation round trip for tools).
bool CallContext::CanElicit() const { return Declared("elicitation"); }
bool CallContext::CanSample() const { return Declared("sampling"); }

Result<json> CallContext::Ask(std::string_view key_view, const std::string& method, json params) {
  std::string key(key_view);
  {
    std::lock_guard lock(mutex_);
    if (answers_.contains(key)) return answers_[key];
  }
  std::string capability = CapabilityFor(method);
  bool declared = Declared(capability);
  if (!setup_.modern && declared && setup_.live_requests && setup_.channel) {
    PARITY_ASSIGN_OR_RETURN(json response, setup_.channel->Request(method, std::move(params), setup_.cancel));
    std::lock_guard lock(mutex_);
    answers_[key] = response;
    return response;
  }
  std::lock_guard lock(mutex_);
  if (setup_.modern && !declared) {
    missing_[capability] = json::object();
    return FailedPrecondition("the client did not declare the \"" + capability + "\" capability needed for " + method);
  }
  for (const auto& p : pending_) {
    if (p.key == key) return Status(ErrorKind::kInputRequired, "waiting for the client's answer to \"" + key + "\"");
  }
  pending_.push_back({key, method, std::move(params)});
  return Status(ErrorKind::kInputRequired, "waiting for the client's answer to \"" + key + "\"");
}

Result<ElicitAnswer> CallContext::Elicit(std::string_view key, std::string_view message, const json& schema) {
  PARITY_ASSIGN_OR_RETURN(json response,
                          Ask(key, "elicitation/create", {{"message", std::string(message)}, {"requestedSchema", schema}}));
  return ParseElicitAnswer(response);
}

Result<json> CallContext::Sample(std::string_view key, const json& params) {
  return Ask(key, "sampling/createMessage", params);
}

Result<json> CallContext::ListRoots(std::string_view key) { return Ask(key, "roots/list", json::object()); }

bool CallContext::CanListRoots() const {
  if (!Declared("roots")) return false;
  return setup_.modern || (setup_.live_requests && setup_.channel);
}

const policy::Policy& CallContext::policy() const {
  return setup_.policy ? *setup_.policy : ToolContext::policy();
}

// Only a channel to the user: the terminal, a live elicitation request, or an MRTR round.
// Never the confirmation fallback, whose answers the caller writes.
bool CallContext::CanAskUser() const {
  if (setup_.user_prompt) return true;
  if (!Declared("elicitation")) return false;
  return setup_.modern || (setup_.live_requests && setup_.channel);
}

Result<ElicitAnswer> CallContext::AskUser(std::string_view key_view, std::string_view message, const json& schema) {
  std::string key = std::string(kUserAnswerPrefix) + std::string(key_view);
  json params = {{"message", std::string(message)}, {"requestedSchema", schema}};
  {
    std::lock_guard lock(mutex_);
    if (answers_.contains(key)) return ParseElicitAnswer(answers_[key]);
  }
  if (!CanAskUser()) return Unavailable("this client cannot ask the user (no elicitation capability on a live channel)");
  if (setup_.user_prompt) {
    PARITY_ASSIGN_OR_RETURN(json response, setup_.user_prompt(params));
    std::lock_guard lock(mutex_);
    answers_[key] = response;
    return ParseElicitAnswer(response);
  }
  PARITY_ASSIGN_OR_RETURN(json response, Ask(key, "elicitation/create", std::move(params)));
  return ParseElicitAnswer(response);
}

void CallContext::Close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

std::vector<InputRequest> CallContext::pending() const {
  std::lock_guard lock(mutex_);
  return pending_;
}

json CallContext::missing_capabilities() const {
  std::lock_guard lock(mutex_);
  return missing_;
}

json CallContext::answers() const {
  std::lock_guard lock(mutex_);
  return answers_;
}

}  // namespace parity::mcp
