#include "tools/inject_prints/inject_prints.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "domain/inject/inject.h"
#include "domain/ledger/ledger.h"
#include "domain/msprobe/source_locator.h"
#include "support/json_reader.h"

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
  std::string analyzer = "ast";
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
    "analyzer": {"type": "string", "enum": ["ast", "deepseek", "sampling"], "default": "ast"},
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
  r.Optional("analyzer", p.analyzer).OneOf("analyzer", p.analyzer, {"ast", "deepseek", "sampling"});
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
    std::ifstream in(*p.hunt_json);
    if (!in) return NotFound(*p.hunt_json + ": cannot read hunt.json");
    std::stringstream ss;
    ss << in.rdbuf();
    json hunt = json::parse(ss.str(), nullptr, false);
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

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  const Params& p = *params;
  if (p.analyzer != "ast") {
    return mcp::ToolResult::Error(
        Unavailable("analyzer \"" + p.analyzer + "\" is not implemented in this build").WithHint("use analyzer=\"ast\""));
  }
  fs::path worktree = fs::absolute(p.worktree);
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
    if (p.action == "analyze") {
      // Analysis only reads, but still only parity worktrees are looked at.
      Status guard = inject::CheckParityWorktree(worktree);
      result = guard.ok() ? inject::Analyze(o) : Result<json>(guard);
    } else {
      result = inject::Inject(o);
    }
  }
  if (p.action == "inject" || p.action == "revert") {
    fs::path report_dir = p.report_dir ? fs::absolute(*p.report_dir)
                                       : (ctx.report_dir().empty() ? fs::absolute("numerical_report") : ctx.report_dir());
    ledger::Entry e;
    e.tool = "inject_prints";
    e.action = p.action;
    e.inputs = arguments;
    e.git = {{"worktree", worktree.string()}};
    e.outcome = result.ok() ? json{{"status", "ok"}} : json{{"status", "failed"}, {"message", result.status().message()}};
    if (result.ok()) e.outputs = {{"files", (*result).value("files", json::array())}};
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
      "In a parity worktree only: analyses a statement's inputs/outputs or a function's arguments/returns with "
      "Python's ast (run by the training interpreter), injects one helper import and one probe call per value "
      "(each prints a PARITY_PROBE JSON line: id, file:line, before/after, name, type, shape, dtype, device, "
      "sha256 of the bytes, sum/mean/min/max/norm, on a chosen rank and call), reverts byte for byte (checked by "
      "SHA-256) and lists what is injected. Targets: file+line, function, or the user frames of "
      "msprobe_first_diff's hunt.json.";
  tool.spec.input_schema = InputSchema();
  tool.spec.output_schema = json{{"type", "object"}};
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = false;  // only parity's worktrees, always revertible
  tool.spec.annotations.idempotent = false;
  tool.spec.annotations.open_world = false;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
