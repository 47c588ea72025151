// parity hunt --config config.json [--max-iterations N] [--tolerance T] [--report-dir D]
// [--yes] [--keep-worktrees] [--language zh|en]: PrecisionComparer's root-cause loop as one
// non-interactive run (domain/workflow/hunt.h), its sides local or over SSH. The report
// directory defaults to <test code_path>/numerical_report, or ./numerical_report when the
// test side is remote. stderr: a progress bar on a terminal, plain
// lines otherwise; stdout: the outcome as JSON. SIGINT/SIGTERM cancel the running training,
// and the probes are reverted before parity exits.
#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/pipeline_display.h"
#include "cli/user_policy.h"
#include "cli/workflow_commands.h"
#include "domain/workflow/hunt.h"
#include "tools/pipeline_runner.h"

namespace parity::cli {

namespace {

using nlohmann::json;

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity hunt: %s\nusage: parity hunt --config config.json [--max-iterations N] [--tolerance T] "
               "[--report-dir DIR] [--yes] [--keep-worktrees] [--language zh|en] [--policy FILE] [--allow-folder DIR]...\n"
               "  exit status: 0 no divergence, 1 divergence located, 2 inconclusive or error\n",
               why.c_str());
  return kExitUsage;
}

template <typename T>
bool ParseNumber(const std::string& text, T& out) {
  try {
    size_t used = 0;
    if constexpr (std::is_same_v<T, int>) out = std::stoi(text, &used);
    else out = std::stod(text, &used);
    return used == text.size();
  } catch (...) {
    return false;
  }
}


// Each remote side's SSH host must be in the user's policy, or accepted at the terminal
// (then added to this run's policy, so run_training does not ask again); with --yes or
// without a terminal, a host outside the policy stops the hunt before anything connects.
Status AuthorizeSshHosts(const workflow::ComparerConfig& config, const std::string& config_path, policy::Policy& policy,
                         const std::function<Result<json>(const json&)>& prompt) {
  for (const auto* side : {&config.baseline, &config.test}) {
    if (side->mode != "remote" || !side->ssh) continue;
    policy::ConnectAction a;
    a.what = "parity hunt (" + config_path + "): the " + (side == &config.baseline ? "baseline" : "test") + " side";
    a.host = side->ssh->host;
    a.port = side->ssh->port;
    a.user = side->ssh->username;
    if (side->ssh->password_env) a.password_env = *side->ssh->password_env;
    policy::Decision d = policy.CheckConnect(a);
    // PrecisionComparer's literal password belongs to this very host (the user's config
    // gives them together); it reaches libssh through this variable of parity's own.
    const bool literal = !side->ssh->password_env && side->ssh->password;
    const std::string key = side == &config.baseline ? "BASELINE" : "TEST";
    auto bind_literal = [&] {
      if (literal) policy.AddSshHost({a.host, a.port, a.user, "PARITY_HUNT_SSH_PASSWORD_" + key, "the config's own password"});
    };
    if (d.allowed()) {
      bind_literal();
      continue;
    }
    Status refused = policy::Refused("the SSH host is outside the user's policy: " + d.reason)
                         .WithEvidence("action", policy::Describe(a))
                         .WithEvidence("policy_line", d.allow_with.dump())
                         .WithHint("add the policy line to " + policy::DefaultPolicyFile().string() +
                                   " (or --policy FILE), or run without --yes at a terminal to confirm it");
    if (d.verdict == policy::Decision::Verdict::kRefused || !prompt) return refused;
    PARITY_ASSIGN_OR_RETURN(json answer, prompt({{"message", policy::Describe(a) + "\n" + d.reason}}));
    if (answer.value("action", "") != "accept") return Cancelled("the user declined the SSH host " + a.host);
    policy.AddSshHost({a.host, a.port, a.user, a.password_env, "confirmed at the terminal"});
    bind_literal();
  }
  return Status::Ok();
}

}  // namespace

int HuntCommand(const std::vector<std::string>& args) {
  std::string config_path, report_dir, max_iterations, tolerance, language = "zh";
  bool yes = false, keep = false;
  PolicyFlags policy_flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (a == "--config" || a == "--report-dir" || a == "--max-iterations" || a == "--tolerance" || a == "--language") {
      if (i + 1 >= args.size()) return Usage(a + " needs a value");
      std::string& target = a == "--config"           ? config_path
                            : a == "--report-dir"     ? report_dir
                            : a == "--max-iterations" ? max_iterations
                            : a == "--tolerance"      ? tolerance
                                                      : language;
      target = args[++i];
    } else if (a == "--yes" || a == "-y") {
      yes = true;
    } else if (a == "--keep-worktrees") {
      keep = true;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (config_path.empty()) return Usage("--config is required");
  if (language != "zh" && language != "en") return Usage("--language expects zh or en, got " + language);
  auto config = workflow::ReadComparerConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "parity hunt: %s\n", config.status().ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(config.status()).dump(2).c_str());
    return 2;
  }
  if (!max_iterations.empty() && (!ParseNumber(max_iterations, config->max_iterations) || config->max_iterations < 1)) {
    return Usage("--max-iterations expects a positive integer, got " + max_iterations);
  }
  if (!tolerance.empty() && (!ParseNumber(tolerance, config->tolerance) || !(config->tolerance >= 0))) {
    return Usage("--tolerance expects a number >= 0, got " + tolerance);
  }

  workflow::HuntOptions options;
  options.assume_yes = yes;
  options.keep_worktrees = keep;
  options.language = language;
  if (!report_dir.empty()) {
    options.report_dir = std::filesystem::absolute(report_dir).lexically_normal();
  } else if (config->test.mode == "remote") {
    // The test tree is on the SSH host; the report is written here.
    options.report_dir = std::filesystem::current_path() / "numerical_report";
  } else if (!config->test.code_path.empty()) {
    options.report_dir = std::filesystem::absolute(config->test.code_path) / "numerical_report";
  } else {
    return Usage("--report-dir is required when test.code_path is not set");
  }

  // The local folders the user's config names are the user's; its run_scripts and SSH hosts
  // go through the policy (the hosts here, before anything connects; the runs in run_training).
  std::vector<std::filesystem::path> folders = {options.report_dir};
  for (const auto* side : {&config->baseline, &config->test}) {
    if (side->mode == "local" && !side->code_path.empty()) folders.push_back(side->code_path);
  }
  // parity's own two worktrees beside the test tree (domain/workflow hunt_sides.cpp); a
  // shadow hunt's lie in the report directory.
  if (config->test.mode == "local" && !config->test.code_path.empty()) {
    std::filesystem::path top = std::filesystem::absolute(config->test.code_path).lexically_normal();
    if (top.filename().empty()) top = top.parent_path();  // "repo/"
    for (const char* side : {"-hunt-baseline", "-hunt-candidate"}) {
      folders.push_back(top.parent_path() / (top.filename().string() + side));
    }
  }
  for (const auto& dir : {config->baseline_data_dir, config->test_data_dir, config->compare_output_dir}) {
    if (!dir.empty() && (config->baseline.mode == "local" || config->test.mode == "local")) folders.push_back(dir);
  }
  auto user_policy = LoadUserPolicy(policy_flags, folders, "config " + config_path);
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity hunt: %s\n", user_policy.status().ToString().c_str());
    return 2;
  }
  auto prompt = TerminalPrompt(yes);
  if (Status s = AuthorizeSshHosts(*config, config_path, **user_policy, prompt); !s.ok()) {
    std::fprintf(stderr, "parity hunt: %s\n", s.ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(s).dump(2).c_str());
    return 2;
  }

  InterruptCancels interrupt;
  options.cancel = interrupt.token();

  PipelineDisplay display("hunt", isatty(STDERR_FILENO) == 1);
  tools::InProcessToolRunner runner(options.report_dir, [&display](double done, std::optional<double> total,
                                                            const std::string& message) {
    display.Progress(done, total, message);
  });
  runner.SetCancellation(interrupt.token());
  runner.SetPolicy(*user_policy, prompt);
  auto outcome = workflow::RunHunt(*config, options, runner, display);
  display.Finish();
  int code = workflow::HuntExitCode(outcome);
  if (!outcome.ok()) {
    std::fprintf(stderr, "parity hunt: stopped: %s\n", outcome.status().ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(outcome.status()).dump(2).c_str());
    return code;
  }
  std::fprintf(stderr, "hunt verdict: %s — %s (report directory %s)\n", outcome->verdict.c_str(),
               outcome->explanation.c_str(), options.report_dir.string().c_str());
  std::printf("%s\n", workflow::HuntOutcomeJson(*outcome).dump(2).c_str());
  return code;
}

}  // namespace parity::cli
