#include "tools/probe_env/probe_env.h"

#include <filesystem>

#include "domain/env/probe.h"
#include "domain/env/probe_script.h"
#include "domain/ledger/ledger.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/probe_env/probe_env_schema.h"
#include "tools/run_training/remote_params.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Params {
  env::ProbeOptions probe;
  std::optional<std::string> python;
  std::optional<run::SshTarget> ssh;
  json compare_with;
  std::optional<std::string> report_dir;
  bool record = true;
};

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  JsonReader r(arguments, "arguments");
  r.Optional("python", p.python).Optional("search_paths", p.probe.search_paths).Optional("dev_dir", p.probe.dev_dir);
  r.Optional("env", p.probe.env).Optional("timeout_s", p.probe.timeout_s).Optional("compare_with", p.compare_with);
  r.Optional("report_dir", p.report_dir).Optional("record", p.record);
  if (r.ok() && (p.probe.timeout_s < 5 || p.probe.timeout_s > 3600)) r.Fail(r.Child("timeout_s"), "must be between 5 and 3600");
  if (r.ok() && !p.compare_with.is_null() && !p.compare_with.is_object()) {
    r.Fail(r.Child("compare_with"), std::string("expected object, got ") + JsonTypeName(p.compare_with));
  }
  PARITY_ASSIGN_OR_RETURN(p.ssh, DecodeRemote(arguments, r));
  PARITY_RETURN_IF_ERROR(r.Finish());
  p.probe.python = p.python ? *p.python : (p.ssh ? "python3" : "/usr/bin/python3");
  return p;
}

std::string Summary(const json& report) {
  std::string s = "probe_env on " + report["host"].get<std::string>() + ": accelerator " +
                  report["accelerator"].get<std::string>() + ", fingerprint " +
                  report["fingerprint"]["sha256"].get<std::string>().substr(0, 12);
  const json& anomalies = report["anomalies"];
  if (anomalies.empty()) return s + ", no anomaly.";
  s += ", " + std::to_string(anomalies.size()) + " anomal" + (anomalies.size() == 1 ? "y" : "ies") +
       " to report to the user (not bypassed):";
  for (const auto& a : anomalies) s += "\n- " + a["code"].get<std::string>() + ": " + a["message"].get<std::string>();
  return s;
}

mcp::ToolResult HandleUnguarded(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  Params& p = *params;
  fs::path report_dir = p.report_dir ? fs::path(*p.report_dir) : ctx.report_dir();
  if (report_dir.empty()) report_dir = fs::current_path() / "numerical_report";
  // The interpreter runs parity's probe script with the caller's variables set: both are
  // the user's to allow, as is the SSH host.
  {
    std::vector<Judged> actions;
    const std::string where = p.ssh ? p.ssh->Describe() : "local";
    if (p.ssh) {
      actions.push_back(Judge(ctx.policy(), policy::ConnectAction{"probe_env: the SSH host probed", p.ssh->host,
                                                                  p.ssh->port, p.ssh->user,
                                                                  p.ssh->password_env.value_or("")}));
    }
    actions.push_back(Judge(ctx.policy(), policy::RunAction{"probe_env: the environment probe (parity's script, run "
                                                            "by this interpreter)",
                                                            {p.probe.python, "-c", "<parity's environment probe>"},
                                                            "", p.probe.env, where, true}));
    if (Status s = Authorize(ctx, "probe_env", actions); !s.ok()) return mcp::ToolResult::Error(s);
    if (p.record) {
      auto allowed = AuthorizePath(ctx, report_dir, policy::Access::kWrite, "arguments.report_dir");
      if (!allowed.ok()) return mcp::ToolResult::Error(allowed.status());
    }
  }
  auto host = run::OpenHost(p.ssh);
  if (!host.ok()) return mcp::ToolResult::Error(host.status());
  ctx.Progress(0, 1, "probing " + (*host)->Describe());
  auto report = env::Probe(**host, p.probe);
  if (!report.ok()) return mcp::ToolResult::Error(report.status());
  json out = std::move(report).value();

  if (!p.compare_with.is_null()) {
    json other = p.compare_with.contains("summary") ? p.compare_with["summary"] : p.compare_with;
    out["differences"] = env::DiffSummaries(out["fingerprint"]["summary"], other);
  }
  out["ledger_entry"] = nullptr;
  if (p.record) {
    ledger::Entry e;
    e.tool = "probe_env";
    e.action = "probe";
    std::vector<std::string> argv = {"sh", "-c", env::kProbeScript, "parity-probe", p.probe.python, p.probe.dev_dir,
                                     p.probe.search_paths.empty() ? "1" : "0", env::kPythonProbe};
    argv.insert(argv.end(), p.probe.search_paths.begin(), p.probe.search_paths.end());
    e.command = ledger::Command{argv, "", p.probe.env, (*host)->Describe()};
    e.inputs = arguments;
    json codes = json::array();
    for (const auto& a : out["anomalies"]) codes.push_back(a["code"]);
    e.outcome = {{"status", "ok"}, {"anomalies", codes}, {"accelerator", out["accelerator"]}};
    e.environment = out["fingerprint"];
    auto id = ledger::Append(fs::absolute(report_dir), e);
    if (!id.ok()) return mcp::ToolResult::Error(std::move(id).take_status().Context("recording the probe in the ledger"));
    out["ledger_entry"] = *id;
  }
  ctx.Progress(1, 1, "done");
  return mcp::ToolResult::Structured(out, Summary(out));
}

// A malformed job record or probe output must not throw across the tool boundary.
mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  try {
    return HandleUnguarded(arguments, ctx);
  } catch (const nlohmann::json::exception& e) {
    return mcp::ToolResult::Error(Internal(std::string("probe_env: unexpected JSON shape: ") + e.what()));
  }
}

}  // namespace

mcp::Tool MakeProbeEnvTool() {
  mcp::Tool tool;
  tool.spec.name = "probe_env";
  tool.spec.title = "Probe the training environment";
  tool.spec.description =
      "Skill step 1: what decides a training's numerics on this machine or an SSH host. CANN installs "
      "(version.cfg, ascend_*_install.info), driver, `npu-smi info` (parsed), /dev/davinci*, ASCEND_* variables, "
      "the interpreter's torch / torch_npu / CUDA, nvidia-smi, CPU and memory. Each anomaly the pre-merge skill "
      "lists (no version.cfg, neither npu-smi nor davinci nodes, torch_npu import failure, no ASCEND variables) "
      "is returned with its evidence for the user to judge; none is bypassed. Also an environment fingerprint "
      "(sha256 of versions and numerics-relevant variables such as HCCL_DETERMINISTIC, CUBLAS_WORKSPACE_CONFIG) "
      "and, with compare_with, how it differs from another run's.";
  tool.spec.input_schema = ProbeEnvInputSchema();
  tool.spec.output_schema = ProbeEnvOutputSchema();
  // Not read-only: it runs an interpreter and appends to the ledger (record: true).
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = false;
  tool.spec.annotations.idempotent = false;
  tool.spec.annotations.open_world = true;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
