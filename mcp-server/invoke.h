// Runs one handler (tool, prompt, resource read) with the answers the client already gave,
// and turns what the handler asked for into the era's form: an MRTR `input_required`
// result (2026-07-28), a confirmation_required tool result with a signed token (clients
// that cannot elicit), or -32021 when a 2026-07-28 client lacks a needed capability.
// The CLI and the server share it, so both behave the same.
#pragma once

#include <functional>
#include <optional>

#include "mcp-server/call_context.h"
#include "mcp-server/errors.h"
#include "mcp-server/signed_state.h"

namespace parity::mcp {

struct Invocation {
  std::optional<RpcError> error;  // a protocol error instead of a result
  json result;                    // the result body, without resultType
  bool input_required = false;    // result is an MRTR input_required body
  json confirmation;              // the confirmation_required object (fallback), else null
  json answers;                   // every answer known when the handler returned
  bool threw = false;             // the handler threw (a server fault, not a tool error)
};

struct InvokeInputs {
  StateBinding binding;           // method, target, arguments as the handler sees them
  std::string request_state;      // MRTR retry; empty when none
  json input_responses;           // MRTR retry; null when none
  json confirmations;             // fallback round trip; null when none
};

// The argument a tool receives its confirmations in; removed before the tool decodes.
inline constexpr const char* kConfirmationsArgument = "confirmations";

// Splits `arguments` into the tool's own arguments and the confirmations argument.
void SplitConfirmations(json& arguments, json& confirmations);

Invocation InvokeTool(const Tool& tool, const json& arguments, const InvokeInputs& inputs, CallSetup setup,
                      const StateSigner& signer);

// For prompts/get and resources/read: `body` returns the result body.
Invocation InvokeHandler(const InvokeInputs& inputs, CallSetup setup, const StateSigner& signer,
                         const std::function<Result<json>(CallContext&)>& body);

// The cap on any tool result as sent (its JSON, content and structuredContent together):
// an assistant's client cuts or refuses far smaller ones (Claude Code's default is 25,000
// tokens), so every tool keeps its results bounded (series and tables go to files in the
// report directory, with resource links) and a result above the cap is replaced by an
// error naming its size and how to narrow the request, never sent cut.
inline constexpr size_t kMaxToolResultBytes = 256 * 1024;

// The CallToolResult JSON of a ToolResult; `has_output_schema` decides whether framework
// shapes (errors) may carry structuredContent (strict clients validate it against the schema).
json ToolResultToJson(const ToolResult& result, bool has_output_schema);

}  // namespace parity::mcp
