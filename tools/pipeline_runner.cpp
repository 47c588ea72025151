#include "tools/pipeline_runner.h"

#include "mcp-server/invoke.h"
#include "tools/all_tools.h"

namespace parity::tools {

namespace {

using mcp::json;

class ProgressChannel : public mcp::ClientChannel {
 public:
  explicit ProgressChannel(const InProcessToolRunner::ProgressFn& fn) : fn_(fn) {}
  void Notify(const std::string& method, json params) override {
    if (method != "notifications/progress" || !fn_) return;
    std::optional<double> total;
    if (params.contains("total") && params["total"].is_number()) total = params["total"].get<double>();
    fn_(params.value("progress", 0.0), total, params.value("message", ""));
  }
  Result<json> Request(const std::string& method, json, const CancellationToken&) override {
    return Unavailable("a pipeline cannot send " + method);
  }

 private:
  const InProcessToolRunner::ProgressFn& fn_;
};

ErrorKind KindNamed(const std::string& name) {
  for (ErrorKind k : {ErrorKind::kInvalidArgument, ErrorKind::kNotFound, ErrorKind::kFailedPrecondition,
                      ErrorKind::kUnavailable, ErrorKind::kDeadlineExceeded, ErrorKind::kCancelled,
                      ErrorKind::kInputRequired, ErrorKind::kInternal}) {
    if (name == ErrorKindName(k)) return k;
  }
  return ErrorKind::kUnavailable;
}

// The tool's isError result as a Status carrying all its evidence.
Status FromErrorResult(const json& result) {
  std::string text;
  for (const auto& block : result.value("content", json::array())) {
    if (block.value("type", "") == "text") text += (text.empty() ? "" : "\n") + block.value("text", "");
  }
  const json& structured = result.value("structuredContent", json::object());
  if (structured.contains("error") && structured["error"].is_object()) {
    const json& e = structured["error"];
    Status s(KindNamed(e.value("kind", "")), e.value("message", text));
    if (e.contains("hint")) s.WithHint(e.value("hint", ""));
    const json evidence = e.value("evidence", json::object());  // items() must not outlive it
    for (const auto& [k, v] : evidence.items()) {
      s.WithEvidence(k, v.is_string() ? v.get<std::string>() : v.dump());
    }
    return s;
  }
  Status s(ErrorKind::kUnavailable, text.empty() ? "the tool failed" : text);
  if (!structured.empty()) s.WithEvidence("result", structured.dump(2));
  return s;
}

}  // namespace

InProcessToolRunner::InProcessToolRunner(std::filesystem::path report_dir, ProgressFn on_progress)
    : report_dir_(std::move(report_dir)), on_progress_(std::move(on_progress)) {
  for (auto& tool : AllTools()) registry_.Add(std::move(tool));
}

Result<json> InProcessToolRunner::Call(const std::string& name, const json& arguments) {
  auto found = registry_.Find(name);
  if (!found) return Internal("the tool " + name + " is not registered in this build");
  // The protocol drops an error's structuredContent for tools with an output schema (a
  // strict client would validate it against that schema); the pipeline keeps the handler's
  // own error (kind, hint, evidence) so its steps can tell one refusal from another.
  json error_structured;
  mcp::Tool wrapped{found->spec, [&error_structured, handler = found->handler](const json& a, mcp::ToolContext& c) {
                      mcp::ToolResult r = handler(a, c);
                      if (r.is_error) error_structured = r.structured;
                      return r;
                    }};
  const mcp::Tool* tool = &wrapped;
  ProgressChannel channel(on_progress_);
  mcp::CallSetup setup;
  setup.channel = &channel;
  setup.cancel = cancel_;
  setup.progress_token = "pipeline";
  setup.report_dir = report_dir_;
  setup.policy = policy_;
  setup.user_prompt = prompt_;
  setup.caller_is_user = caller_is_user_;
  mcp::InvokeInputs inputs;
  inputs.binding = {"tools/call", name, arguments};
  mcp::StateSigner signer;
  mcp::Invocation inv = mcp::InvokeTool(*tool, arguments, inputs, setup, signer);
  if (inv.error) return Internal("calling " + name + ": " + inv.error->ToJson().dump());
  if (!inv.confirmation.is_null()) {
    return FailedPrecondition(name + " asked a question the pipeline config does not answer")
        .WithHint("answer it in the config's `confirm` section")
        .WithEvidence("question", inv.confirmation.dump(2));
  }
  if (inv.result.value("isError", false)) {
    json result = inv.result;
    if (!result.contains("structuredContent") && error_structured.is_object()) result["structuredContent"] = error_structured;
    return FromErrorResult(result);
  }
  if (!inv.result.contains("structuredContent")) return Internal(name + " returned no structured result");
  return inv.result["structuredContent"];
}

}  // namespace parity::tools
