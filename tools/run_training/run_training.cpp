#include "tools/run_training/run_training.h"

#include <filesystem>

#include "domain/env/probe.h"
#include "domain/run/executor.h"
#include "domain/run/jobs.h"
#include "domain/run/launch.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/run_training/remote_params.h"
#include "tools/run_training/run_training_schema.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// config names a log and a checkpoint directory, so it must be one plain path component.
constexpr const char* kNameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-";

struct Params {
  std::string action = "start";
  std::optional<std::string> job_id, report_dir, worktree, checkpoint_dir, python;
  run::LaunchRequest launch;
  std::map<std::string, std::string> env;
  int timeout_s = 0, wait_timeout_s = 0;
  bool wait = true, clear_checkpoint_folder = true, probe_env = true;
  std::string dump_folder = "outputs", remote_job_root = ".parity/jobs";
  std::optional<run::SshTarget> ssh;
  std::string executor;  // empty: local, or ssh when an SSH host is given
};

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  run::LaunchRequest& l = p.launch;
  std::optional<int> steps;
  JsonReader r(arguments, "arguments");
  r.Optional("action", p.action).OneOf("action", p.action, {"start", "plan", "status", "wait", "cancel", "list"});
  r.Optional("executor", p.executor);
  if (!p.executor.empty()) r.OneOf("executor", p.executor, {"local", "ssh", "slurm"});
  r.Optional("job_id", p.job_id).Optional("report_dir", p.report_dir).Optional("worktree", p.worktree);
  r.Optional("phase", l.phase).OneOf("phase", l.phase, {"train", "gen_ckpt"});
  r.Optional("side", l.side).Optional("config", l.config);
  r.Optional("launcher", l.launcher).OneOf("launcher", l.launcher, {"torchtitan", "megatron", "custom", "argv"});
  r.Optional("model", l.model).Optional("script", l.script).Optional("dataset_path", l.dataset_path);
  r.Optional("steps", steps).Optional("seed", l.seed).Optional("deterministic", l.deterministic);
  r.Optional("load_checkpoint", l.load_checkpoint).Optional("checkpoint_dir", p.checkpoint_dir);
  r.Optional("template", l.custom_template).Optional("argv", l.argv).Optional("extra_args", l.extra_args);
  r.Optional("env", p.env).Optional("timeout_s", p.timeout_s).Optional("wait", p.wait);
  r.Optional("wait_timeout_s", p.wait_timeout_s).Optional("clear_checkpoint_folder", p.clear_checkpoint_folder);
  r.Optional("dump_folder", p.dump_folder).Optional("probe_env", p.probe_env).Optional("python", p.python);
  r.Optional("remote_job_root", p.remote_job_root);
  if (r.ok() && steps && *steps < 1) r.Fail(r.Child("steps"), "must be at least 1");
  if (r.ok() && p.timeout_s < 0) r.Fail(r.Child("timeout_s"), "must be 0 (no limit) or positive");
  if (r.ok() && p.wait_timeout_s < 0) r.Fail(r.Child("wait_timeout_s"), "must be 0 (no limit) or positive");
  if (r.ok() && p.action != "start" && p.action != "plan" && p.action != "list" && !p.job_id) {
    r.Fail(r.Child("job_id"), "required for action=" + p.action);
  }
  if (r.ok() && (p.action == "start" || p.action == "plan")) {
    if (!p.worktree) r.Fail(r.Child("worktree"), "required to start a training (the directory it runs in)");
    else if (l.phase == "train" && l.side.empty()) r.Fail(r.Child("side"), "required for phase train (baseline or candidate)");
    else if (l.config.empty()) r.Fail(r.Child("config"), "required: it names the log and the initial checkpoint");
    else if (l.config.find_first_not_of(kNameChars) != std::string::npos || l.config[0] == '.') {
      r.Fail(r.Child("config"), "\"" + l.config + "\" is not a config name (letters, digits, _ . + -); pass a config "
             "file through extra_args and name the case here");
    }
  }
  for (const auto& [k, v] : p.env) {
    if (r.ok() && (k.empty() || k.find('=') != std::string::npos)) r.Fail(r.Child("env"), "invalid variable name \"" + k + "\"");
  }
  PARITY_ASSIGN_OR_RETURN(p.ssh, DecodeRemote(arguments, r));
  PARITY_RETURN_IF_ERROR(r.Finish());
  if (p.executor == "ssh" && !p.ssh) {
    return InvalidArgument("arguments.ssh: required by executor ssh").WithHint("give {\"host\", \"username\", \"port\"}");
  }
  if (p.executor == "local" && p.ssh) {
    return InvalidArgument("arguments.executor: local cannot take an ssh host").WithHint("use executor ssh, or drop ssh");
  }
  if (p.executor.empty() || p.executor == "local") p.executor = p.ssh ? "ssh" : "local";
  l.steps = steps;
  return p;
}

fs::path ReportDir(const Params& p, const mcp::ToolContext& ctx) {
  if (p.report_dir) return fs::absolute(*p.report_dir).lexically_normal();
  if (!ctx.report_dir().empty()) return fs::absolute(ctx.report_dir()).lexically_normal();
  return fs::current_path() / "numerical_report";
}

mcp::ToolResult JobResult(const json& view, const std::string& verb) {
  std::string status = view["status"];
  std::string summary = "run_training " + verb + ": job " + view["id"].get<std::string>() + " " + status + " — " +
                        view.value("message", "") + "\nlog: " + view.value("log_path", "");
  mcp::ToolResult result = mcp::ToolResult::Structured({{"job", view}}, summary);
  if (status != "ok" && status != "running" && !(verb == "cancel" && status == "cancelled")) {
    // The skill's rule: a failed run is reported as an error, with its evidence.
    result = mcp::ToolResult::Structured({{"job", view}}, run::JobFailure(view).ToString());
    result.is_error = true;
  }
  return result;
}

run::WaitOptions WaitOptionsFor(const Params& p, mcp::ToolContext& ctx, bool started_here) {
  run::WaitOptions w;
  w.cancel = ctx.cancellation();
  w.cancel_job_on_cancel = started_here;
  w.max_wait_s = p.wait_timeout_s;
  w.poll_interval_s = p.ssh ? 1.0 : 0.5;
  w.on_progress = [&ctx](const run::Progress& progress) {
    ctx.Progress(static_cast<double>(progress.step),
                 progress.total ? std::optional<double>(static_cast<double>(*progress.total)) : std::nullopt,
                 progress.message);
  };
  return w;
}

// The training command, the environment probe's interpreter and the SSH host, judged
// together and confirmed once; locally the worktree and checkpoint folder must be the user's.
Status AuthorizeStart(const Params& p, mcp::ToolContext& ctx, const std::vector<std::string>& argv,
                      const std::string& worktree) {
  const policy::Policy& policy = ctx.policy();
  std::vector<Judged> actions;
  const std::string host = p.ssh ? p.ssh->Describe() : "local";
  if (p.ssh) {
    policy::ConnectAction c{"run_training: the SSH host the training runs on", p.ssh->host, p.ssh->port, p.ssh->user,
                            p.ssh->password_env.value_or("")};
    actions.push_back(Judge(policy, c));
  } else {
    PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, worktree, policy::Access::kWrite, "arguments.worktree").status());
    if (!p.launch.checkpoint_dir.empty()) {
      PARITY_RETURN_IF_ERROR(
          AuthorizePath(ctx, p.launch.checkpoint_dir, policy::Access::kWrite, "arguments.checkpoint_dir").status());
    }
  }
  policy::RunAction run{"run_training: the training (" + p.launch.launcher + " launcher)", argv, worktree,
                        p.env, host, false};
  actions.push_back(Judge(policy, run));
  if (p.probe_env) {
    std::string python = p.python ? *p.python : (p.ssh ? "python3" : "/usr/bin/python3");
    policy::RunAction probe{"run_training: the environment probe (parity's script, run by this interpreter)",
                            {python, "-c", "<parity's environment probe>"}, "", p.env, host, true};
    actions.push_back(Judge(policy, probe));
  }
  return Authorize(ctx, "run_training", actions);
}

// The job to start, from the arguments (nothing runs yet).
Result<run::JobSpec> BuildSpec(Params& p, const fs::path& report_dir) {
  run::LaunchRequest& l = p.launch;
  std::string worktree = *p.worktree;
  if (!p.ssh) worktree = fs::absolute(worktree).lexically_normal().string();
  if (!worktree.empty() && worktree.size() > 1 && worktree.back() == '/') worktree.pop_back();
  l.worktree = worktree;
  l.report_dir = report_dir.string();
  if (p.dump_folder != "outputs") l.dump_folder = p.dump_folder;

  const bool preset = l.launcher == "torchtitan" || l.launcher == "megatron";
  const bool uses_checkpoint = l.phase == "gen_ckpt" || l.load_checkpoint;
  if (p.checkpoint_dir) {
    l.checkpoint_dir = p.ssh ? *p.checkpoint_dir : fs::absolute(*p.checkpoint_dir).lexically_normal().string();
  } else if (preset && uses_checkpoint) {
    if (p.ssh) {
      return InvalidArgument("arguments.checkpoint_dir: required in remote mode")
          .WithHint("give a directory on the SSH host for the initial checkpoint");
    }
    l.checkpoint_dir = (report_dir / ("initial_ckpt_" + l.config)).string();
  }
  PARITY_ASSIGN_OR_RETURN(run::Launch launch, run::BuildLaunch(l));

  run::JobSpec spec;
  spec.phase = l.phase;
  spec.side = l.side;
  spec.config = l.config;
  spec.launcher = l.launcher;
  spec.argv = launch.argv;
  spec.cwd = worktree;
  spec.env = p.env;
  spec.ssh = p.ssh;
  spec.remote_job_root = p.remote_job_root;
  spec.timeout_s = p.timeout_s;
  spec.expected_steps = launch.expected_steps;
  spec.checkpoint_to_move = launch.checkpoint_to_move;
  spec.checkpoint_dir = (l.phase == "gen_ckpt" || (l.load_checkpoint && (preset || p.checkpoint_dir))) ? l.checkpoint_dir : "";
  spec.clear_checkpoint_folder = p.clear_checkpoint_folder && preset;
  spec.dump_folder = p.dump_folder;
  spec.notes = launch.notes;
  spec.inputs = {{"launcher", l.launcher}, {"phase", l.phase}, {"model", l.model}, {"config", l.config},
                 {"steps", launch.expected_steps ? json(*launch.expected_steps) : json(nullptr)},
                 {"seed", l.seed}, {"deterministic", l.deterministic}, {"dataset_path", l.dataset_path},
                 {"checkpoint_dir", spec.checkpoint_dir}, {"extra_args", l.extra_args}, {"timeout_s", p.timeout_s}};
  return spec;
}

// The user's Slurm settings when the executor is slurm (the caller only chooses it).
Result<std::optional<run::SlurmSettings>> SettingsFor(const Params& p) {
  if (p.executor != "slurm") return std::optional<run::SlurmSettings>();
  PARITY_ASSIGN_OR_RETURN(run::SlurmSettings s, run::ReadUserSlurmSettings());
  return std::optional<run::SlurmSettings>(std::move(s));
}

// action plan: what start would run, with the batch script a Slurm run would submit.
mcp::ToolResult Plan(Params& p, const fs::path& report_dir) {
  auto spec = BuildSpec(p, report_dir);
  if (!spec.ok()) return mcp::ToolResult::Error(spec.status());
  auto settings = SettingsFor(p);
  if (!settings.ok()) return mcp::ToolResult::Error(settings.status());
  json plan = {{"executor", p.executor},
               {"command", {{"argv", spec->argv}, {"cwd", spec->cwd}, {"env", spec->env}}},
               {"expected_steps", spec->expected_steps ? json(*spec->expected_steps) : json(nullptr)}};
  std::string summary = "run_training plan (" + p.executor + "): " + ShellQuote(spec->argv) + "\nin " + spec->cwd;
  if (*settings) {
    run::BatchJob batch{"<id>", spec->argv, spec->env, spec->cwd, "<log>", spec->timeout_s};
    plan["batch_script"] = run::BatchScript(**settings, batch);
    plan["slurm_settings"] = run::ToJson(**settings);
    plan["settings_file"] = run::UserSlurmSettingsPath().string();
    summary += "\nbatch script (the job's id and log are filled in at submission):\n" + plan["batch_script"].get<std::string>();
  }
  return mcp::ToolResult::Structured({{"plan", plan}}, summary);
}

mcp::ToolResult Start(Params& p, mcp::ToolContext& ctx, const fs::path& report_dir) {
  auto built = BuildSpec(p, report_dir);
  if (!built.ok()) return mcp::ToolResult::Error(built.status());
  run::JobSpec& spec = *built;
  auto settings = SettingsFor(p);
  if (!settings.ok()) return mcp::ToolResult::Error(settings.status());
  // Before anything connects, runs or is written: what the user's policy says of it.
  if (Status s = AuthorizeStart(p, ctx, spec.argv, spec.cwd); !s.ok()) return mcp::ToolResult::Error(s);

  auto host = run::OpenHost(p.ssh);
  if (!host.ok()) return mcp::ToolResult::Error(host.status());
  std::unique_ptr<run::Executor> executor =
      *settings ? run::SlurmExecutor(**host, *settings) : run::SupervisorExecutor(**host);
  if (*settings) {
    spec.inputs["executor"] = "slurm";
    spec.notes.push_back("the environment fingerprint is of the submitting host " + (*host)->Describe() +
                         "; the training runs on the node Slurm gives it (see slurm.nodes)");
  }

  // The rest (probe, start, following the log) takes minutes: a client of the 2026-07-28
  // tasks extension gets a task to poll from here on.
  const run::LaunchRequest& l = p.launch;
  if (p.wait) ctx.RunInBackground("starting " + l.config + " (" + (l.side.empty() ? l.phase : l.side) + ")");
  json environment = nullptr;
  if (p.probe_env) {
    env::ProbeOptions probe;
    probe.python = p.python ? *p.python : (p.ssh ? "python3" : "/usr/bin/python3");
    probe.env = p.env;
    ctx.Progress(0, std::nullopt, "probing the environment on " + (*host)->Describe());
    auto report = env::Probe(**host, probe);
    if (report.ok()) {
      json codes = json::array();
      for (const auto& a : (*report)["anomalies"]) codes.push_back(a["code"]);
      spec.environment = (*report)["fingerprint"];
      spec.environment["anomalies"] = codes;
      environment = spec.environment;
    } else {
      spec.environment = {{"error", report.status().message()}};
      spec.notes.push_back("environment probe failed, no fingerprint recorded: " + report.status().message());
      environment = spec.environment;
    }
  }

  auto started = run::StartJob(*executor, report_dir, spec);
  if (!started.ok()) return mcp::ToolResult::Error(started.status());
  json view = std::move(started).value();
  if (p.wait) {
    auto waited = run::WaitJob(report_dir, view["id"], WaitOptionsFor(p, ctx, /*started_here=*/true), host->get());
    if (!waited.ok()) return mcp::ToolResult::Error(waited.status());
    view = std::move(waited).value();
  }
  mcp::ToolResult result = JobResult(view, "start");
  result.structured["environment"] = environment.is_null() ? json::object() : environment;
  return result;
}

mcp::ToolResult HandleUnguarded(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  Params& p = *params;
  fs::path report_dir = ReportDir(p, ctx);
  auto allowed = AuthorizePath(ctx, report_dir, policy::Access::kWrite, "arguments.report_dir");
  if (!allowed.ok()) return mcp::ToolResult::Error(allowed.status());
  if (p.action == "start") return Start(p, ctx, report_dir);
  if (p.action == "plan") return Plan(p, report_dir);
  // A remote job is polled on the host these arguments name (checked against its record),
  // never on one its record alone names.
  std::unique_ptr<run::Host> host;
  if (p.ssh) {
    auto opened = run::OpenHost(p.ssh);
    if (!opened.ok()) return mcp::ToolResult::Error(opened.status());
    host = std::move(opened).value();
  }
  if (p.action == "list") {
    auto jobs = run::ListJobs(report_dir, host.get());
    if (!jobs.ok()) return mcp::ToolResult::Error(jobs.status());
    return mcp::ToolResult::Structured({{"jobs", *jobs}},
                                       std::to_string(jobs->size()) + " job(s) in " + report_dir.string());
  }
  Result<json> view = p.action == "status" ? run::JobStatus(report_dir, *p.job_id, host.get())
                      : p.action == "wait" ? run::WaitJob(report_dir, *p.job_id, WaitOptionsFor(p, ctx, false), host.get())
                                           : run::CancelJob(report_dir, *p.job_id, host.get());
  if (!view.ok()) return mcp::ToolResult::Error(view.status());
  return JobResult(*view, p.action);
}

// A malformed job record or probe output must not throw across the tool boundary.
mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  try {
    return HandleUnguarded(arguments, ctx);
  } catch (const nlohmann::json::exception& e) {
    return mcp::ToolResult::Error(Internal(std::string("run_training: unexpected JSON shape: ") + e.what()));
  }
}

}  // namespace

mcp::Tool MakeRunTrainingTool() {
  mcp::Tool tool;
  tool.spec.name = "run_training";
  tool.spec.title = "Run a training job (locally, over SSH or on Slurm)";
  tool.spec.description =
      "Skill steps 3-4: runs a training in a worktree as a detached job, locally or on an SSH host. The "
      "torchtitan preset builds the skill's exact command lines: phase gen_ckpt (1 step, --checkpoint.last_save_in_hf "
      "--checkpoint.last_save_model_only, step-1 moved to <report_dir>/initial_ckpt_<config>) and phase train (loads "
      "it with --checkpoint.load_only --checkpoint.initial_load_path ... --checkpoint.initial_load_in_hf). Seed 42 "
      "and --debug.deterministic by default; --debug.deterministic_warn_only and 'None' values are refused. The log "
      "is teed live to <report_dir>/<side>_<config>_train.log; progress (step N of M, loss) is reported while "
      "waiting. A failure (exit code, signal, timeout, Traceback/ERROR/OOM/HCCL/ERRxxxxx lines, NaN/Inf, fewer "
      "steps than asked, 'metadata is None', a missing checkpoint) is an error with evidence. Jobs survive the "
      "server: status / wait / cancel / list by job_id. executor slurm submits each run as an sbatch job with the "
      "user's own Slurm settings (action plan shows the batch script first); its state (pending and why, running "
      "on which nodes, exit code, time limit) comes from squeue/scontrol/sacct and cancel is scancel. Every run is "
      "recorded in the ledger with its command, commit, environment fingerprint and, on Slurm, its job id.";
  tool.spec.input_schema = RunTrainingInputSchema();
  tool.spec.output_schema = RunTrainingOutputSchema();
  // It runs commands, may kill a job's process group (cancel) and empties the checkpoint
  // folder before a run; over SSH it reaches another host.
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = true;
  tool.spec.annotations.idempotent = false;
  tool.spec.annotations.open_world = true;
  tool.spec.task_support = mcp::TaskSupport::kOptional;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
