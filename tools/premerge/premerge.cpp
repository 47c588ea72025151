#include "tools/premerge/premerge.h"

#include <filesystem>

#include "domain/workflow/premerge.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/pipeline_tool.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  std::string config;
  std::optional<int> steps;
  bool no_cache = false;
};

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  JsonReader r(arguments, "arguments");
  r.Required("config", p.config).Optional("steps", p.steps).Optional("no_cache", p.no_cache);
  if (r.ok() && p.config.empty()) r.Fail(r.Child("config"), "must name premerge.json");
  if (r.ok() && p.steps && *p.steps < 1) r.Fail(r.Child("steps"), "must be at least 1");
  PARITY_RETURN_IF_ERROR(r.Finish());
  return p;
}

std::string Summary(const workflow::PremergeOutcome& o) {
  std::string s = "premerge verdict: " + o.verdict;
  for (const auto& c : o.cases) s += "\n- " + c.config + ": " + c.verdict + " — " + c.reason;
  for (const auto& w : o.warnings) s += "\n- warning: " + w;
  return s;
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  auto file = AuthorizePath(ctx, params->config, policy::Access::kRead, "arguments.config");
  if (!file.ok()) return mcp::ToolResult::Error(file.status());
  auto config = workflow::ReadPremergeConfig(*file);
  if (!config.ok()) return mcp::ToolResult::Error(config.status());
  if (params->steps) config->steps = *params->steps;
  // The folders the config names are the caller's choice: allowed only as the user's
  // policy (or the client's roots) allows them.
  auto repo = AuthorizePath(ctx, config->repo, policy::Access::kRead, params->config + ": repo");
  if (!repo.ok()) return mcp::ToolResult::Error(repo.status());
  auto report = AuthorizePath(ctx, config->report_dir, policy::Access::kWrite, params->config + ": report_dir");
  if (!report.ok()) return mcp::ToolResult::Error(report.status());

  ctx.RunInBackground("premerge " + config->candidate + " against " + config->baseline);
  ToolPipeline pipeline(ctx, config->report_dir, {{*repo, false}, {*report, true}});
  workflow::PremergeOptions options;
  options.no_cache = params->no_cache;
  options.cancel = ctx.cancellation();
  auto outcome = workflow::RunPremerge(*config, options, pipeline.runner(), pipeline);
  if (!outcome.ok()) return mcp::ToolResult::Error(outcome.status());
  return mcp::ToolResult::Structured(workflow::PremergeOutcomeJson(*outcome), Summary(*outcome));
}

json InputSchema() {
  return json::parse(R"json({
  "type": "object",
  "properties": {
    "config": {"type": "string", "description": "Path of the premerge.json to run (the same file `parity premerge --config` takes: repo, baseline and candidate refs, configs, steps, compare rule, confirm answers). Its repo must be readable and its report_dir writable under the user's policy."},
    "steps": {"type": "integer", "minimum": 1, "description": "Training steps per run, instead of the file's."},
    "no_cache": {"type": "boolean", "default": false, "description": "Train every baseline run; use and store nothing in the baseline cache."}
  },
  "required": ["config"],
  "additionalProperties": false
})json");
}

json OutputSchema() {
  return json::parse(R"json({
  "type": "object",
  "required": ["verdict", "cases"],
  "properties": {
    "verdict": {"type": "string", "description": "PASS, FAIL or INCONCLUSIVE, over every config"},
    "cases": {"type": "array", "items": {"type": "object", "properties": {
      "config": {"type": "string"}, "verdict": {"type": "string"}, "reason": {"type": "string"},
      "report_json": {"type": "string"}}}},
    "determinism": {"type": "array", "items": {"type": "object"}},
    "baseline_commit": {"type": "string"},
    "candidate_commit": {"type": "string"},
    "outputs": {"type": "object", "description": "The rendered reports (html, markdown, pdf, ...)"},
    "warnings": {"type": "array", "items": {"type": "string"}},
    "jobs": {"type": "array", "items": {"type": "string"}, "description": "Slurm job ids of the trainings, in plan order"}
  }
})json");
}

}  // namespace

mcp::Tool MakePremergeTool() {
  mcp::Tool tool;
  tool.spec.name = "premerge";
  tool.spec.title = "Run the whole pre-merge accuracy check";
  tool.spec.description =
      "The nine-step pre-merge skill as one call, from a premerge.json: environment probe, the baseline and "
      "candidate worktrees, the initial checkpoint, the baseline trained twice (gate 1: it must repeat) and the "
      "candidate from the same checkpoint, per config of the matrix; the comparison by the file's rule; the "
      "reports; cleanup. Returns PASS, FAIL or INCONCLUSIVE per config and overall (INCONCLUSIVE, never PASS, "
      "when the evidence cannot decide). Long: call it as a task where the client can. Every step runs under the "
      "user's policy; what it does not allow is asked of the user, and the file's `confirm` section answers only "
      "the workflow's own questions (file classes, anomalies, the matrix).";
  tool.spec.input_schema = InputSchema();
  tool.spec.output_schema = OutputSchema();
  DeclarePipelineTool(tool.spec);
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
