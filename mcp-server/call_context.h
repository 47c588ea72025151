// The ToolContext the protocol layer gives a tool, prompt or resource handler for one
// request, and the rules for asking the client (elicitation, sampling, roots):
//  1. an answer already known (MRTR inputResponses + requestState, the confirmations
//     argument, a CLI answers file) is returned;
//  2. legacy era, client declared the capability, a live channel: a server->client request
//     is sent and awaited;
//  3. 2026-07-28 era: the question is recorded (-> input_required) when the client declared
//     the capability, else the capability is recorded as missing (-> -32021);
//  4. otherwise (legacy without capability, CLI): the question is recorded for the
//     confirmation fallback.
// Recorded questions make the call return Status kInputRequired to the handler.
// AskUser (questions of the user's policy) keys its answers under kUserAnswerPrefix; the
// answers of the confirmations argument and of the CLI's answers file never carry such a
// key (InvokeTool drops them), so only the client's own elicitation, or the CLI's
// terminal prompt (CallSetup.user_prompt), answers them.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mcp-server/tool.h"

namespace parity::mcp {

// How one request talks back to its client. Thread-safe.
class ClientChannel {
 public:
  virtual ~ClientChannel() = default;
  // A notification related to the request (progress, log message).
  virtual void Notify(const std::string& method, json params) = 0;
  // A server->client request related to the call, answered by the client; blocks until the
  // response, the cancellation or the timeout. Unavailable when the channel cannot do it.
  virtual Result<json> Request(const std::string& method, json params, const CancellationToken& cancel) = 0;
};

struct InputRequest {
  std::string key;
  std::string method;  // elicitation/create, sampling/createMessage, roots/list
  json params;
};

// The task side of a call that may become a 2026-07-28 task (mcp-server/task_extension.h).
class TaskHooks {
 public:
  virtual ~TaskHooks() = default;
  // The handler called RunInBackground: the request is answered with a task now.
  virtual void Detach(std::string_view status_message) = 0;
  virtual bool detached() const = 0;
  // Progress once detached: the task's status message.
  virtual void Progress(double done, std::optional<double> total, std::string_view message) = 0;
};

struct CallSetup {
  CancellationToken cancel;
  json progress_token;                  // null: the client asked for no progress
  std::optional<LogLevel> log_level;    // nullopt: no log notifications
  json client_capabilities = json::object();
  bool modern = false;                  // 2026-07-28 era
  bool live_requests = false;           // the channel may send server->client requests
  json answers = json::object();        // key -> the client's response, known already
  ClientChannel* channel = nullptr;     // may be null (no notifications at all)
  std::filesystem::path report_dir;
  std::chrono::milliseconds min_progress_interval{20};
  std::shared_ptr<const policy::Policy> policy;  // null: the built-in rules, no folder
  // The CLI's way to ask the user at the terminal: the elicitation/create params in, an
  // ElicitResult out. Unset: no terminal (the server, `--yes`, no tty).
  std::function<Result<json>(const json& params)> user_prompt;
  bool caller_is_user = false;  // the CLI: arguments written by the user
  TaskHooks* task = nullptr;            // set when the call may become a task
};

inline constexpr const char* kUserAnswerPrefix = "user:";

class CallContext final : public ToolContext {
 public:
  explicit CallContext(CallSetup setup);

  CancellationToken cancellation() const override { return setup_.cancel; }
  void Progress(double done, std::optional<double> total, std::string_view message) override;
  void Log(LogLevel level, std::string_view logger, const json& data) override;
  bool CanElicit() const override;
  Result<ElicitAnswer> Elicit(std::string_view key, std::string_view message, const json& requested_schema) override;
  bool CanSample() const override;
  Result<json> Sample(std::string_view key, const json& create_message_params) override;
  Result<json> ListRoots(std::string_view key) override;
  bool CanListRoots() const override;
  void RunInBackground(std::string_view status_message) override;
  const std::filesystem::path& report_dir() const override { return setup_.report_dir; }
  const policy::Policy& policy() const override;
  bool CanAskUser() const override;
  Result<ElicitAnswer> AskUser(std::string_view key, std::string_view message, const json& requested_schema) override;
  bool caller_is_user() const override { return setup_.caller_is_user; }

  // After the handler returned: no more notifications.
  void Close();
  std::vector<InputRequest> pending() const;
  json missing_capabilities() const;  // {"sampling": {}} or empty object
  json answers() const;               // every answer known, for the next token

 private:
  Result<json> Ask(std::string_view key, const std::string& method, json params);
  bool Declared(const std::string& capability) const;

  CallSetup setup_;
  mutable std::mutex mutex_;
  bool closed_ = false;
  std::optional<double> last_progress_;
  std::chrono::steady_clock::time_point last_progress_time_{};
  std::vector<InputRequest> pending_;
  json missing_ = json::object();
  json answers_;
};

const char* LogLevelName(LogLevel level);
std::optional<LogLevel> ParseLogLevel(std::string_view name);
Result<ElicitAnswer> ParseElicitAnswer(const json& response);

}  // namespace parity::mcp
