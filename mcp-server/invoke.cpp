#include "mcp-server/invoke.h"

#include "mcp-server/result_pages.h"

namespace parity::mcp {

namespace {

bool IsUserAnswer(const std::string& key) { return key.rfind(kUserAnswerPrefix, 0) == 0; }

// Collects the answers carried by a token and the fresh responses beside it.
Result<json> ResolveAnswers(const InvokeInputs& in, const StateSigner& signer) {
  json answers = json::object();
  if (!in.request_state.empty()) {
    PARITY_ASSIGN_OR_RETURN(answers, signer.Verify(in.binding, in.request_state));
    if (!answers.is_object()) answers = json::object();
  }
  if (!in.input_responses.is_null()) {
    if (!in.input_responses.is_object()) return InvalidArgument("params.inputResponses: expected object");
    for (auto& [k, v] : in.input_responses.items()) answers[k] = v;
  }
  if (!in.confirmations.is_null()) {
    const json& c = in.confirmations;
    std::string path = std::string("arguments.") + kConfirmationsArgument;
    if (!c.is_object()) return InvalidArgument(path + ": expected object {\"token\", \"answers\"}");
    if (!c.contains("token") || !c["token"].is_string()) return InvalidArgument(path + ".token: expected string");
    if (c.contains("answers") && !c["answers"].is_object()) return InvalidArgument(path + ".answers: expected object");
    PARITY_ASSIGN_OR_RETURN(json carried, signer.Verify(in.binding, c["token"].get<std::string>()));
    if (carried.is_object()) {
      for (auto& [k, v] : carried.items()) {
        if (!IsUserAnswer(k)) answers[k] = v;
      }
    }
    const json given = c.value("answers", json::object());  // a named copy: items() must not outlive it
    for (auto& [k, v] : given.items()) {
      if (!IsUserAnswer(k)) answers[k] = v;  // the caller cannot answer for the user
    }
  }
  return answers;
}

json InputRequestsJson(const std::vector<InputRequest>& pending) {
  json requests = json::object();
  for (const auto& p : pending) requests[p.key] = {{"method", p.method}, {"params", p.params}};
  return requests;
}

// After the handler: a protocol error or an input request, if either is due.
std::optional<Invocation> Deferred(const CallContext& ctx, const CallSetup& setup, const InvokeInputs& in,
                                   const StateSigner& signer, bool tool, bool has_output_schema) {
  json missing = ctx.missing_capabilities();
  if (!missing.empty()) {
    Invocation inv;
    inv.error = RpcError{rpc::kMissingCapability, "the request needs a client capability that was not declared",
                         {{"requiredCapabilities", missing}}};
    return inv;
  }
  auto pending = ctx.pending();
  if (pending.empty()) return std::nullopt;
  std::string token = signer.Sign(in.binding, ctx.answers());
  Invocation inv;
  if (setup.modern) {
    inv.input_required = true;
    inv.result = {{"inputRequests", InputRequestsJson(pending)}, {"requestState", token}};
    return inv;
  }
  if (!tool) {
    inv.error = RpcError{rpc::kInvalidParams,
                         "this request needs an answer from the user, but the client declared no way to ask "
                         "(elicitation/sampling capability)",
                         {{"inputRequests", InputRequestsJson(pending)}}};
    return inv;
  }
  json confirmations = json::array();
  std::string text = "Confirmation required. Show these questions to the user, then call this tool again with the "
                     "same arguments plus \"" + std::string(kConfirmationsArgument) +
                     "\": {\"token\": <confirmation_token>, \"answers\": {<key>: {\"action\": \"accept\", "
                     "\"content\": {...}}}}.\n";
  for (const auto& p : pending) {
    json c = {{"key", p.key}, {"method", p.method}};
    if (p.method == "elicitation/create") {
      c["message"] = p.params.value("message", "");
      c["requestedSchema"] = p.params.value("requestedSchema", json::object());
      text += "- " + p.key + ": " + c["message"].get<std::string>() + "\n";
    } else {
      c["params"] = p.params;
      text += "- " + p.key + ": answer the " + p.method + " request in params\n";
    }
    confirmations.push_back(std::move(c));
  }
  json structured = {{"status", "confirmation_required"}, {"confirmations", confirmations}, {"confirmation_token", token}};
  inv.result = {{"content", json::array({{{"type", "text"}, {"text", text + structured.dump(2)}}})}};
  // A strict client validates structuredContent against the tool's outputSchema, which
  // does not describe this shape; such tools get it as text in an isError result.
  if (has_output_schema) inv.result["isError"] = true;
  else inv.result["structuredContent"] = structured;
  inv.confirmation = std::move(structured);
  return inv;
}

}  // namespace

void SplitConfirmations(json& arguments, json& confirmations) {
  confirmations = nullptr;
  if (arguments.is_object() && arguments.contains(kConfirmationsArgument)) {
    confirmations = arguments[kConfirmationsArgument];
    arguments.erase(kConfirmationsArgument);
  }
}

json ToolResultToJson(const ToolResult& r, bool has_output_schema) {
  json j = {{"content", r.content}};
  if (!r.structured.is_null() && !(r.is_error && has_output_schema)) j["structuredContent"] = r.structured;
  if (r.is_error) j["isError"] = true;
  return j;
}

// Answers given up front (the CLI's --answers file) stay; answers that came with this
// request (MRTR responses, a confirmation token) are added and win on the same key.
static void MergeAnswers(json& preset, const json& resolved) {
  if (!preset.is_object()) preset = json::object();
  for (auto it = preset.begin(); it != preset.end();) {  // an answers file cannot answer for the user
    if (IsUserAnswer(it.key())) it = preset.erase(it);
    else ++it;
  }
  for (auto& [k, v] : resolved.items()) preset[k] = v;
}

// A result over the cap: its JSON goes to the report directory, the call answers where
// and links the pages (result_pages.h); when it cannot be written, the error says why.
static json OversizedResult(const Tool& tool, const std::string& text, CallContext& ctx, bool has_output_schema) {
  const std::string size = "the result of " + tool.spec.name + " is " + std::to_string(text.size()) +
                           " bytes, over the cap of " + std::to_string(kMaxToolResultBytes) + " bytes on any tool result";
  auto spilled = SpillResult(ctx.report_dir(), ctx.policy(), tool.spec.name, text);
  if (!spilled.ok()) {
    return ToolResultToJson(
        ToolResult::Error(InvalidArgument(size + "; it was not sent, and could not be kept (" +
                                          spilled.status().message() + ")")
                              .WithHint("narrow the request (fewer paths or metrics, series: false, a step range); "
                                        "what the tool wrote to the report directory is there")),
        has_output_schema);
  }
  ToolResult r = ToolResult::Error(
      FailedPrecondition(size + ", so it was not sent inline; the whole result (its JSON) is in " +
                         spilled->path.string() + ": read it with resources/read in " + std::to_string(spilled->pages) +
                         " pages, " + ResultPageUri(spilled->file, 0) +
                         (spilled->pages > 1 ? " to " + ResultPageUri(spilled->file, spilled->pages - 1) : std::string()))
          .WithHint("or narrow the request (fewer paths or metrics, series: false, a step range)"));
  constexpr size_t kMaxLinks = 64;
  for (size_t page = 0; page < spilled->pages && page < kMaxLinks; ++page) {
    r.content.push_back({{"type", "resource_link"},
                         {"uri", ResultPageUri(spilled->file, page)},
                         {"name", spilled->file + " page " + std::to_string(page + 1) + "/" + std::to_string(spilled->pages)},
                         {"mimeType", "application/json"}});
  }
  return ToolResultToJson(r, has_output_schema);
}

Invocation InvokeTool(const Tool& tool, const json& arguments, const InvokeInputs& inputs, CallSetup setup,
                      const StateSigner& signer) {
  bool has_output_schema = !tool.spec.output_schema.is_null();
  auto answers = ResolveAnswers(inputs, signer);
  if (!answers.ok()) {
    Invocation inv;
    if (!inputs.request_state.empty() || !inputs.input_responses.is_null()) {
      inv.error = RpcErrorFromStatus(answers.status());
    } else {
      inv.result = ToolResultToJson(ToolResult::Error(answers.status()), has_output_schema);
    }
    return inv;
  }
  MergeAnswers(setup.answers, *answers);
  CallContext ctx(setup);
  ToolResult result;
  bool threw = false;
  try {
    result = tool.handler(arguments, ctx);
  } catch (const std::exception& e) {  // a tool bug must not take the server down
    result = ToolResult::Error(Internal(std::string("tool ") + tool.spec.name + " threw: " + e.what()));
    threw = true;
  }
  ctx.Close();
  if (auto d = Deferred(ctx, setup, inputs, signer, /*tool=*/true, has_output_schema)) {
    d->answers = ctx.answers();
    return std::move(*d);
  }
  Invocation inv;
  inv.result = ToolResultToJson(result, has_output_schema);
  std::string text = inv.result.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxToolResultBytes) inv.result = OversizedResult(tool, text, ctx, has_output_schema);
  inv.answers = ctx.answers();
  inv.threw = threw;
  return inv;
}

Invocation InvokeHandler(const InvokeInputs& inputs, CallSetup setup, const StateSigner& signer,
                         const std::function<Result<json>(CallContext&)>& body) {
  Invocation inv;
  auto answers = ResolveAnswers(inputs, signer);
  if (!answers.ok()) {
    inv.error = RpcErrorFromStatus(answers.status());
    return inv;
  }
  MergeAnswers(setup.answers, *answers);
  CallContext ctx(setup);
  Result<json> result = body(ctx);
  ctx.Close();
  if (auto d = Deferred(ctx, setup, inputs, signer, /*tool=*/false, false)) return std::move(*d);
  if (!result.ok()) {
    inv.error = RpcErrorFromStatus(result.status());
    return inv;
  }
  inv.result = std::move(*result);
  return inv;
}

}  // namespace parity::mcp
