// The contract between the protocol layer and the tools. A tool is a ToolSpec (name,
// description, schemas, annotations) and a handler: a plain function from decoded JSON
// arguments and a ToolContext to a ToolResult. Tools never see request ids, sessions,
// eras or transports; everything they may do to the client goes through ToolContext.
//
// Asking the user (elicitation) is uniform across eras. ToolContext::Elicit(key, ...)
//  - returns the answer when one is available: the legacy era sends elicitation/create and
//    waits; the 2026-07-28 era finds it in the MRTR retry's inputResponses; a client that
//    cannot elicit at all passes it back in the tool arguments (see below);
//  - otherwise returns a Status of kind kInputRequired after recording the question. The
//    tool then returns (any result); the protocol layer sees the recorded questions and
//    answers `input_required` (MRTR) or, for a client without elicitation, a result with
//    structuredContent {"status":"confirmation_required","confirmations":[...],
//    "confirmation_token":"..."} that the assistant shows the user and passes back as the
//    argument "confirmations": {"token": ..., "answers": {key: {action, content}}}.
// Sampling (ToolContext::Sample) follows the same pattern.
//
// ToolContext::AskUser is the other way of asking, for what the user's policy governs
// (tools/authorize.h): only the client's own elicitation (a live elicitation/create, or an
// MRTR inputResponse) or the CLI's terminal prompt can answer it; the `confirmations`
// argument, a CLI answers file and anything else the caller writes cannot. A client that
// cannot elicit gets Unavailable, and the tool refuses with the policy line to add.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cancel.h"
#include "support/policy.h"
#include "support/status.h"

namespace parity::mcp {

using json = nlohmann::json;

enum class TaskSupport { kForbidden, kOptional, kRequired };

struct ToolAnnotations {
  std::optional<bool> read_only;    // readOnlyHint
  std::optional<bool> destructive;  // destructiveHint
  std::optional<bool> idempotent;   // idempotentHint
  std::optional<bool> open_world;   // openWorldHint
};

struct ToolSpec {
  std::string name;         // [A-Za-z0-9_.-]{1,128}
  std::string title;
  std::string description;  // required by clients and the conformance suite
  json input_schema;        // JSON Schema 2020-12 object schema, kept verbatim
  json output_schema;       // null when the tool has no structured output
  ToolAnnotations annotations;
  TaskSupport task_support = TaskSupport::kForbidden;
};

// What a tool returns. `content` holds MCP content blocks; `structured` is the
// structuredContent (must match output_schema when there is one). A tool failure is a
// result with is_error set, never a protocol error.
struct ToolResult {
  json content = json::array();
  json structured;  // null when none
  bool is_error = false;

  // structuredContent plus a text block: `summary` followed by the JSON itself.
  static ToolResult Structured(json structured, const std::string& summary = {});
  static ToolResult Text(std::string text);
  // An isError result carrying the status message, hint and evidence, as text and as
  // structuredContent {"error": {"kind", "message", "hint", "evidence": {...}}}.
  static ToolResult Error(const Status& status);
};

enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

struct ElicitAnswer {
  enum class Action { kAccept, kDecline, kCancel };
  Action action = Action::kCancel;
  json content;  // the accepted form values (object), null otherwise
};

class ToolContext {
 public:
  virtual ~ToolContext() = default;

  virtual CancellationToken cancellation() const = 0;
  bool cancelled() const { return cancellation().cancelled(); }

  // Reports progress when the client asked for it (a progressToken); otherwise a no-op.
  // Values must increase; the implementation drops non-increasing ones and rate-limits.
  virtual void Progress(double done, std::optional<double> total, std::string_view message) = 0;

  // A log message to the client (notifications/message), filtered by the client's level.
  virtual void Log(LogLevel level, std::string_view logger, const json& data) = 0;

  // Whether this client can be asked at all (elicitation capability, form mode).
  virtual bool CanElicit() const = 0;
  // Asks the user; see the header comment. `key` identifies the question across MRTR
  // retries and confirmation round-trips and must be stable for the same question.
  virtual Result<ElicitAnswer> Elicit(std::string_view key, std::string_view message,
                                      const json& requested_schema) = 0;

  virtual bool CanSample() const = 0;
  // sampling/createMessage with the given params; returns the CreateMessageResult.
  virtual Result<json> Sample(std::string_view key, const json& create_message_params) = 0;

  // roots/list, answered like Elicit; returns the ListRootsResult ({"roots": [...]}).
  virtual Result<json> ListRoots(std::string_view key) { return Unavailable("this context cannot list roots"); }
  // Whether the client declared the roots capability (ListRoots may then be called).
  virtual bool CanListRoots() const { return false; }

  // The user's policy this call runs under. The default is the built-in rules with no
  // folder at all: a context that was given no policy allows nothing outside them.
  virtual const policy::Policy& policy() const;
  // Whether AskUser can reach the user (see the header comment).
  virtual bool CanAskUser() const { return false; }
  // Asks the user, never the caller; Unavailable when no channel to the user exists,
  // kInputRequired while an MRTR round is pending.
  virtual Result<ElicitAnswer> AskUser(std::string_view key, std::string_view message, const json& requested_schema) {
    return Unavailable("this context cannot ask the user");
  }
  // Whether the arguments were written by the user on parity's own command line (`parity
  // call`, the premerge/hunt pipelines), not by an MCP client's caller.
  virtual bool caller_is_user() const { return false; }

  // From here on the call may go on in the background. A 2026-07-28 client that declared
  // the tasks extension gets a task (resultType "task") at this point and polls it with
  // tasks/get; the handler simply carries on, its Progress becoming the task's status and
  // a later Elicit the task's input_required state. Everywhere else it is a no-op and the
  // caller waits as before. Call it after the questions that must be answered before the
  // work starts (they are then asked inline) and before the long part.
  virtual void RunInBackground(std::string_view status_message) { (void)status_message; }

  // The report directory this server writes its ledger and outputs to.
  virtual const std::filesystem::path& report_dir() const = 0;
};

using ToolHandler = std::function<ToolResult(const json& arguments, ToolContext& context)>;

struct Tool {
  ToolSpec spec;
  ToolHandler handler;
};

}  // namespace parity::mcp
