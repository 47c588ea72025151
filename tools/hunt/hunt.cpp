#include "tools/hunt/hunt.h"

#include <filesystem>

#include "domain/workflow/hunt.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/pipeline_tool.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  std::string config;
  std::optional<std::string> report_dir;
  std::optional<int> max_iterations;
  std::optional<double> tolerance;
  std::string language = "zh";
};

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  JsonReader r(arguments, "arguments");
  r.Required("config", p.config).Optional("report_dir", p.report_dir).Optional("max_iterations", p.max_iterations);
  r.Optional("tolerance", p.tolerance).Optional("language", p.language);
  if (r.ok()) r.OneOf("language", p.language, {"zh", "en"});
  if (r.ok() && p.config.empty()) r.Fail(r.Child("config"), "must name the comparer's config.json");
  if (r.ok() && p.max_iterations && *p.max_iterations < 1) r.Fail(r.Child("max_iterations"), "must be at least 1");
  if (r.ok() && p.tolerance && !(*p.tolerance >= 0)) r.Fail(r.Child("tolerance"), "must be a number >= 0");
  PARITY_RETURN_IF_ERROR(r.Finish());
  return p;
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  const Params& p = *params;
  auto file = AuthorizePath(ctx, p.config, policy::Access::kRead, "arguments.config");
  if (!file.ok()) return mcp::ToolResult::Error(file.status());
  auto config = workflow::ReadComparerConfig(*file);
  if (!config.ok()) return mcp::ToolResult::Error(config.status());
  if (p.max_iterations) config->max_iterations = *p.max_iterations;
  if (p.tolerance) config->tolerance = *p.tolerance;
  for (const auto* side : {&config->baseline, &config->test}) {
    if (side->ssh && side->ssh->password) {
      const std::string name = side == &config->baseline ? "baseline" : "test";
      return mcp::ToolResult::Error(
          policy::Refused(p.config + ": " + name + ".ssh.password: a password written in the config file is the "
                          "caller's, not the user's")
              .WithHint("give " + name + ".ssh.password_env (the name of a variable holding it) and let the user "
                        "allow the host in the policy's ssh_hosts, or run `parity hunt --config " + p.config +
                        "` in a terminal"));
    }
  }

  fs::path report_dir;
  if (p.report_dir) {
    report_dir = *p.report_dir;
  } else if (config->test.mode == "local" && !config->test.code_path.empty()) {
    report_dir = fs::path(config->test.code_path) / "numerical_report";
  } else {
    return mcp::ToolResult::Error(InvalidArgument("arguments.report_dir is required when the test side is remote")
                                      .WithHint("name a folder the user's policy lets parity write"));
  }
  auto report = AuthorizePath(ctx, report_dir, policy::Access::kWrite, "the hunt's report directory");
  if (!report.ok()) return mcp::ToolResult::Error(report.status());
  std::vector<std::pair<fs::path, bool>> folders = {{*report, true}};
  for (const auto* side : {&config->baseline, &config->test}) {
    if (side->mode != "local" || side->code_path.empty()) continue;
    auto code = AuthorizePath(ctx, side->code_path, policy::Access::kRead,
                              p.config + ": " + (side == &config->baseline ? "baseline" : "test") + ".code_path");
    if (!code.ok()) return mcp::ToolResult::Error(code.status());
    folders.push_back({*code, false});
  }

  ctx.RunInBackground("hunt: " + config->baseline.code_path + " against " + config->test.code_path);
  ToolPipeline pipeline(ctx, *report, folders);
  workflow::HuntOptions options;
  options.report_dir = *report;
  options.language = p.language;
  options.cancel = ctx.cancellation();
  options.steps_ask_user = true;  // the classes and stale worktrees: audit_workspace asks the user
  auto outcome = workflow::RunHunt(*config, options, pipeline.runner(), pipeline);
  if (!outcome.ok()) return mcp::ToolResult::Error(outcome.status());
  std::string summary = "hunt verdict: " + outcome->verdict + " — " + outcome->explanation;
  return mcp::ToolResult::Structured(workflow::HuntOutcomeJson(*outcome), summary);
}

json InputSchema() {
  return json::parse(R"json({
  "type": "object",
  "properties": {
    "config": {"type": "string", "description": "Path of PrecisionComparer's config.json (baseline and test sides, local or SSH, their run_script, the msprobe data folders, debug options), as `parity hunt --config` takes it."},
    "report_dir": {"type": "string", "description": "Where the hunt writes; default <test code_path>/numerical_report (required when the test side is remote). Must be writable under the user's policy."},
    "max_iterations": {"type": "integer", "minimum": 1, "description": "Instead of the file's debug.max_iterations."},
    "tolerance": {"type": "number", "minimum": 0, "description": "Instead of the file's debug.tolerance."},
    "language": {"type": "string", "enum": ["zh", "en"], "default": "zh", "description": "Language of the rendered report."}
  },
  "required": ["config"],
  "additionalProperties": false
})json");
}

json OutputSchema() {
  return json::parse(R"json({
  "type": "object",
  "required": ["verdict", "explanation"],
  "properties": {
    "verdict": {"type": "string"},
    "explanation": {"type": "string", "description": "What the evidence shows, and only that"},
    "located": {"type": ["object", "null"], "description": "file, line, function, api, code, hunk of the located change"},
    "baseline_commit": {"type": "string"},
    "candidate_commit": {"type": "string"},
    "iterations": {"type": "integer"},
    "outputs": {"type": "object"},
    "warnings": {"type": "array", "items": {"type": "string"}}
  }
})json");
}

}  // namespace

mcp::Tool MakeHuntTool() {
  mcp::Tool tool;
  tool.spec.name = "hunt";
  tool.spec.title = "Hunt the operator and source line that broke numerical parity";
  tool.spec.description =
      "PrecisionComparer's root-cause loop as one call, from its config.json: both sides trained with msprobe "
      "dumps, the first divergent API found, prints injected around it and both sides retrained, until the "
      "operator, the source line and the git hunk are located, or the evidence runs out (then it says so). "
      "Probes are reverted and the user's trees are never modified. Long: call it as a task where the client "
      "can. Every step runs under the user's policy; what it does not allow is asked of the user.";
  tool.spec.input_schema = InputSchema();
  tool.spec.output_schema = OutputSchema();
  DeclarePipelineTool(tool.spec);
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
