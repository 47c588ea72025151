#include "tools/inject_prints/inject_prints.h"
#include "support/file_read.h"
#include "support/json_document.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "domain/inject/analyser.h"
#include "domain/inject/inject.h"
#include "domain/ledger/ledger.h"
#include "domain/msprobe/source_locator.h"
#include "support/json_reader.h"
#include "support/url.h"
#include "tools/authorize.h"

namespace parity::tools {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  std::string action;
  std::string worktree;
  json targets = json::array();
  std::optional<std::string> hunt_json, report_dir;
  std::string python = "/usr/bin/python3";
  std::string analyser = "auto";
  std::optional<std::string> base_url, model;
  double timeout_s = 120, connect_timeout_s = 10, backoff_s = 1;
  int64_t max_attempts = 3, max_response_bytes = 4 << 20;
  int64_t rank = 0;
  std::vector<double> calls = {1};
  std::map<std::string, std::string> expected_sha256;
  bool force = false;
};

const json& InputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "required": ["action", "worktree"],
  "properties": {
    "action": {"type": "string", "enum": ["analyze", "inject", "revert", "status"]},
    "worktree": {"type": "string", "description": "A parity worktree (audit_workspace action=prepare); any other folder is refused."},
    "targets": {"type": "array", "items": {"type": "object", "properties": {
      "file": {"type": "string"}, "line": {"type": "integer", "minimum": 1}, "function": {"type": "string"},
      "enclosing_function": {"type": "boolean", "description": "With line: probe the function containing it."}},
      "required": ["file"], "additionalProperties": false}},
    "hunt_json": {"type": "string", "description": "msprobe_first_diff's hunt.json: every user frame of the first divergent API's stack becomes an enclosing_function target."},
    "analyser": {"type": "string", "enum": ["auto", "deepseek", "sampling", "ast"], "default": "auto", "description": "Who decides the values to probe. auto: DeepSeek when DEEPSEEK_API_KEY is set, then MCP sampling when the client offers it, then Python's ast; each failure is recorded in attempts and the next is tried. An explicit choice that fails is an error."},
    "deepseek": {"type": "object", "description": "The OpenAI-compatible chat endpoint (the key only from DEEPSEEK_API_KEY).", "properties": {
      "base_url": {"type": "string", "description": "Default DEEPSEEK_BASE_URL, else https://api.deepseek.com; POST {base_url}/chat/completions."},
      "model": {"type": "string", "description": "Default DEEPSEEK_MODEL, else deepseek-chat."},
      "timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 120, "description": "Per attempt."},
      "connect_timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": 10},
      "max_attempts": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "Retries on timeouts, connection failures, 429 and 5xx only."},
      "backoff_s": {"type": "number", "minimum": 0, "default": 1, "description": "Wait before the first retry, doubled after each."},
      "max_response_bytes": {"type": "integer", "minimum": 1024, "default": 4194304}},
      "additionalProperties": false},
    "python": {"type": "string", "default": "/usr/bin/python3", "description": "The training host's interpreter (runs the ast analysis)."},
    "rank": {"type": "integer", "minimum": 0, "default": 0},
    "calls": {"type": "array", "items": {"type": "integer", "minimum": 1}, "default": [1], "description": "Which calls of each probe print; [] = every call."},
    "expected_sha256": {"type": "object", "additionalProperties": {"type": "string"}, "description": "From an analyze result: injection is refused when a file changed since."},
    "force": {"type": "boolean", "default": false, "description": "revert: restore originals even when files changed after injection."},
    "report_dir": {"type": "string"}
  },
  "additionalProperties": false
})json");
  return schema;
}

Result<Params> Decode(const json& arguments) {
  Params p;
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  JsonReader r(arguments, "arguments");
  r.Required("action", p.action).OneOf("action", p.action, {"analyze", "inject", "revert", "status"});
  r.Required("worktree", p.worktree).Optional("targets", p.targets).Optional("hunt_json", p.hunt_json);
  r.Optional("analyser", p.analyser).OneOf("analyser", p.analyser, {"auto", "deepseek", "sampling", "ast"});
  r.Object("deepseek", false, [&p](JsonReader& d) {
    d.Optional("base_url", p.base_url).Optional("model", p.model).Optional("timeout_s", p.timeout_s);
    d.Optional("connect_timeout_s", p.connect_timeout_s).Optional("max_attempts", p.max_attempts);
    d.Optional("backoff_s", p.backoff_s).Optional("max_response_bytes", p.max_response_bytes);
    if (d.ok() && !(p.timeout_s > 0)) d.Fail(d.Child("timeout_s"), "must be greater than 0");
    if (d.ok() && !(p.connect_timeout_s > 0)) d.Fail(d.Child("connect_timeout_s"), "must be greater than 0");
    if (d.ok() && (p.max_attempts < 1 || p.max_attempts > 10)) d.Fail(d.Child("max_attempts"), "must be 1 to 10");
    if (d.ok() && p.backoff_s < 0) d.Fail(d.Child("backoff_s"), "must not be negative");
    if (d.ok() && p.max_response_bytes < 1024) d.Fail(d.Child("max_response_bytes"), "must be at least 1024");
  });
  r.Optional("python", p.python).Optional("rank", p.rank).Optional("calls", p.calls);
  r.Optional("expected_sha256", p.expected_sha256).Optional("force", p.force).Optional("report_dir", p.report_dir);
  if (r.ok() && !p.targets.is_array()) r.Fail(r.Child("targets"), "expected array");
  PARITY_RETURN_IF_ERROR(r.Finish());
  return p;
}

Result<std::vector<inject::Target>> DecodeTargets(const Params& p) {
  std::vector<inject::Target> out;
  for (size_t i = 0; i < p.targets.size(); ++i) {
    std::string path = "arguments.targets[" + std::to_string(i) + "]";
    PARITY_RETURN_IF_ERROR(ExpectObject(p.targets[i], path));
    JsonReader r(p.targets[i], path);
    inject::Target t;
    std::optional<int64_t> line;
    r.Required("file", t.file).Optional("line", line).Optional("function", t.function);
    r.Optional("enclosing_function", t.enclosing_function);
    if (r.ok() && !line && !t.function) r.Fail(path, "needs line or function");
    PARITY_RETURN_IF_ERROR(r.Finish());
    if (line) t.line = static_cast<int>(*line);
    out.push_back(t);
  }
  if (p.hunt_json) {
    auto text = ReadFileLimited(*p.hunt_json, 256u << 20);
    if (!text.ok()) return NotFound(*p.hunt_json + ": cannot read hunt.json (" + text.status().message() + ")");
    PARITY_ASSIGN_OR_RETURN(json hunt, ParseJsonDocument(*text, *p.hunt_json));
    if (!hunt.is_object() || !hunt.contains("first_divergence")) {
      return InvalidArgument(*p.hunt_json + ": not msprobe_first_diff's hunt.json");
    }
    if (hunt["first_divergence"].is_null()) return FailedPrecondition(*p.hunt_json + ": no divergence to instrument");
    msprobe::LocateOptions locate;
    locate.worktree = p.worktree;
    for (const json& f : hunt["first_divergence"]["stack"]) {
      if (!f.value("user", false)) continue;
      msprobe::Frame frame;
      frame.file = f["file"];
      frame.line = f["line"];
      frame.function = f["function"];
      frame.code = f.value("code", "");
      auto loc = msprobe::LocateSource(frame, locate);
      if (!loc.local) return NotFound("stack frame " + frame.file + ":" + std::to_string(frame.line) + " is not in the worktree");
      if (frame.function == "<module>") continue;  // module level: no function to instrument
      out.push_back({loc.local->string(), frame.line, std::nullopt, true});
    }
  }
  return out;
}

// MCP sampling as a completion function for the domain's model-backed analyser. The key
// identifies the question across the 2026-07-28 era's input_required rounds.
inject::Completer SamplingCompleter(mcp::ToolContext& ctx) {
  return [&ctx](const inject::LlmPrompt& prompt, const CancellationToken&) -> Result<inject::LlmReply> {
    json request = {{"messages", json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", prompt.user}}}}})},
                    {"systemPrompt", prompt.system}, {"maxTokens", prompt.max_tokens}, {"temperature", 0},
                    {"includeContext", "none"}};
    std::string key = "inject_prints.analysis." + inject::Sha256Hex(prompt.system + "\n" + prompt.user).substr(0, 16);
    PARITY_ASSIGN_OR_RETURN(json answer, ctx.Sample(key, request));
    // content is one block (2025-06-18) or a list of blocks (2025-11-25, with tool use).
    json blocks = answer.is_object() && answer.contains("content") ? answer["content"] : json();
    if (blocks.is_object()) blocks = json::array({blocks});
    inject::LlmReply reply;
    for (const json& b : blocks.is_array() ? blocks : json::array()) {
      if (b.is_object() && b.value("type", "") == "text" && b.contains("text") && b["text"].is_string()) {
        reply.text += b["text"].get<std::string>();
      }
    }
    if (reply.text.empty()) {
      std::string excerpt = answer.dump();
      return Unavailable("the client's sampling answer has no text content")
          .WithEvidence("answer_excerpt", excerpt.substr(0, 600));
    }
    reply.evidence = {{"model", answer.value("model", json("unknown"))}, {"stop_reason", answer.value("stopReason", json(nullptr))}};
    return reply;
  };
}

// The analysers to try, in order (see the "analyser" argument).
Result<std::vector<std::shared_ptr<inject::CodeAnalyser>>> AnalyserChain(const Params& p, mcp::ToolContext& ctx) {
  std::vector<std::shared_ptr<inject::CodeAnalyser>> chain;
  const char* key = std::getenv("DEEPSEEK_API_KEY");
  const bool has_key = key != nullptr && *key != '\0';
  if (p.analyser == "deepseek" || (p.analyser == "auto" && has_key)) {
    if (!has_key) {
      return FailedPrecondition("analyser=deepseek needs the environment variable DEEPSEEK_API_KEY")
          .WithHint("export it where parity runs (it is never taken as an argument), or use analyser=auto or ast");
    }
    inject::ChatEndpoint e;
    const char* env_base = std::getenv("DEEPSEEK_BASE_URL");
    const char* env_model = std::getenv("DEEPSEEK_MODEL");
    if (p.base_url) e.base_url = *p.base_url;
    else if (env_base && *env_base) e.base_url = env_base;
    if (p.model) e.model = *p.model;
    else if (env_model && *env_model) e.model = env_model;
    e.api_key = key;
    e.timeout = std::chrono::milliseconds(static_cast<int64_t>(p.timeout_s * 1000));
    e.connect_timeout = std::chrono::milliseconds(static_cast<int64_t>(p.connect_timeout_s * 1000));
    e.backoff = std::chrono::milliseconds(static_cast<int64_t>(p.backoff_s * 1000));
    e.max_attempts = static_cast<int>(p.max_attempts);
    e.max_response_bytes = static_cast<size_t>(p.max_response_bytes);
    Status valid = inject::ValidateEndpoint(e);
    if (!valid.ok()) return std::move(valid).Context("arguments.deepseek (or DEEPSEEK_BASE_URL / DEEPSEEK_MODEL)");
    // The source and the key go to this endpoint only if the user's policy names it with
    // the key, or the user accepts it now.
    policy::SendAction send{policy::SendAction::Kind::kLlm, "inject_prints: the code around the targets, to the "
                            "model that chooses the values to probe", e.base_url, UrlHost(e.base_url), 0, {},
                            "DEEPSEEK_API_KEY"};
    PARITY_RETURN_IF_ERROR(Authorize(ctx, "inject_prints", {Judge(ctx.policy(), send)}));
    chain.push_back(inject::MakeDeepSeekAnalyser(std::move(e)));
  }
  if (p.analyser == "sampling" || (p.analyser == "auto" && ctx.CanSample())) {
    if (!ctx.CanSample()) {
      return FailedPrecondition("analyser=sampling needs a client that offers MCP sampling (the sampling capability)")
          .WithHint("use analyser=auto, deepseek or ast");
    }
    chain.push_back(inject::MakeLlmAnalyser("sampling", SamplingCompleter(ctx)));
  }
  if (p.analyser == "ast" || p.analyser == "auto") chain.push_back(inject::MakeAstAnalyser());
  return chain;
}

// The worktree, hunt.json and the report directory inside the user's folders; the
// interpreter that runs parity's ast analysis (analyze, inject) the user's to allow.
Status AuthorizeInputs(const Params& p, const fs::path& worktree, const fs::path& report_dir, mcp::ToolContext& ctx) {
  using policy::Access;
  const bool writes = p.action == "inject" || p.action == "revert";
  PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, worktree, writes ? Access::kWrite : Access::kRead, "arguments.worktree").status());
  if (p.hunt_json) PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, *p.hunt_json, Access::kRead, "arguments.hunt_json").status());
  if (writes) PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, report_dir, Access::kWrite, "arguments.report_dir").status());
  if (p.action != "analyze" && p.action != "inject") return Status::Ok();
  policy::RunAction ast{"inject_prints: parity's ast analysis of the targets, run by this interpreter",
                        {p.python, "-c", "<parity's ast analysis>"}, "", {}, "local", true};
  return Authorize(ctx, "inject_prints", {Judge(ctx.policy(), ast)});
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  const Params& p = *params;
  fs::path worktree = fs::absolute(p.worktree);
  fs::path report_dir = p.report_dir ? fs::absolute(*p.report_dir)
                                     : (ctx.report_dir().empty() ? fs::absolute("numerical_report") : ctx.report_dir());
  if (Status s = AuthorizeInputs(p, worktree, report_dir, ctx); !s.ok()) return mcp::ToolResult::Error(s);
  Result<json> result = Internal("unreachable");
  if (p.action == "status") {
    result = inject::InjectStatus(worktree);
  } else if (p.action == "revert") {
    result = inject::Revert(worktree, p.force);
  } else {
    auto targets = DecodeTargets(p);
    if (!targets.ok()) return mcp::ToolResult::Error(targets.status());
    if (targets->empty()) return mcp::ToolResult::Error(InvalidArgument("arguments.targets: no target (give targets or hunt_json)"));
    inject::Options o;
    o.worktree = worktree;
    o.targets = *targets;
    o.python = p.python;
    o.rank = static_cast<int>(p.rank);
    o.calls.clear();
    for (double c : p.calls) o.calls.push_back(static_cast<int>(c));
    o.expected_sha256 = p.expected_sha256;
    o.cancel = ctx.cancellation();
    o.requested = p.analyser;
    o.fall_back = p.analyser == "auto";
    auto chain = AnalyserChain(p, ctx);
    if (!chain.ok()) return mcp::ToolResult::Error(chain.status());
    o.analysers = std::move(*chain);
    o.progress = [&ctx](size_t index, size_t count, const std::string& target) {
      ctx.Progress(static_cast<double>(index), static_cast<double>(count), "analysing " + target);
    };
    if (p.action == "analyze") {
      // Analysis only reads, but still only parity worktrees are looked at.
      Status guard = inject::CheckParityWorktree(worktree);
      result = guard.ok() ? inject::Analyze(o) : Result<json>(guard);
    } else {
      result = inject::Inject(o);
    }
  }
  if (p.action == "inject" || p.action == "revert") {
    ledger::Entry e;
    e.tool = "inject_prints";
    e.action = p.action;
    e.inputs = arguments;
    e.git = {{"worktree", worktree.string()}};
    e.outcome = result.ok() ? json{{"status", "ok"}} : json{{"status", "failed"}, {"message", result.status().message()}};
    if (result.ok()) e.outputs = {{"files", (*result).value("files", json::array())}};
    if (result.ok() && result->contains("analysis")) {
      const json& a = (*result)["analysis"];
      e.outputs["analysis"] = {{"analyser", a.value("analyser", "")}, {"requested", a.value("requested", "")},
                               {"attempts", a.value("attempts", json::array())}};
    }
    (void)ledger::Append(report_dir, e);
  }
  if (!result.ok()) return mcp::ToolResult::Error(result.status());
  return mcp::ToolResult::Structured(*result, "inject_prints " + p.action + " done");
}

}  // namespace

mcp::Tool MakeInjectPrintsTool() {
  mcp::Tool tool;
  tool.spec.name = "inject_prints";
  tool.spec.title = "Probe prints in a parity worktree";
  tool.spec.description =
      "In a parity worktree only: analyses a statement's inputs/outputs or a function's arguments/returns, "
      "injects one helper import and one probe call per value (each prints a PARITY_PROBE JSON line: id, "
      "file:line, before/after, name, type, shape, dtype, device, sha256 of the bytes, sum/mean/min/max/norm, on "
      "a chosen rank and call), reverts byte for byte (checked by SHA-256) and lists what is injected. Targets: "
      "file+line, function, or the user frames of msprobe_first_diff's hunt.json. Python's ast (the training "
      "interpreter) gives the code's structure; the values to probe are chosen by DeepSeek or any "
      "OpenAI-compatible endpoint (DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL, DEEPSEEK_MODEL), by the client's model "
      "through MCP sampling, or by the ast itself (analyser=auto tries them in that order and records each "
      "failure in attempts). A model's answer is used only when every name it gives exists in the code.";
  tool.spec.input_schema = InputSchema();
  tool.spec.output_schema = json{{"type", "object"}};
  // It rewrites source files (of parity's worktrees only) and revert overwrites them
  // again (force: over later edits); the deepseek analyser reaches the network.
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = true;
  tool.spec.annotations.idempotent = false;
  tool.spec.annotations.open_world = true;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
