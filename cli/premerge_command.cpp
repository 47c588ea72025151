// parity premerge --config premerge.json [--yes] [--steps N] [--report-dir DIR] [--keep-worktrees]: the
// premerge-accuracy-check skill as one non-interactive run (domain/workflow/premerge.h).
// stderr: a progress bar on a terminal, plain lines otherwise; stdout: the outcome as JSON.
// SIGINT/SIGTERM cancel the running trainings; the worktrees are removed before parity exits.
#include <unistd.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/pipeline_display.h"
#include "cli/user_policy.h"
#include "cli/workflow_commands.h"
#include "domain/workflow/premerge.h"
#include "tools/pipeline_runner.h"

namespace parity::cli {

namespace {

using nlohmann::json;

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity premerge: %s\nusage: parity premerge --config premerge.json [--yes] [--steps N] "
               "[--report-dir DIR] [--keep-worktrees] [--no-cache] [--policy FILE] [--allow-folder DIR]...\n  exit status: 0 PASS, 1 FAIL, 2 INCONCLUSIVE or error\n",
               why.c_str());
  return kExitUsage;
}

}  // namespace

int PremergeCommand(const std::vector<std::string>& args) {
  std::string config_path, report_dir, steps;
  bool yes = false, keep = false, no_cache = false;
  PolicyFlags policy_flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (a == "--config" || a == "--report-dir" || a == "--steps") {
      if (i + 1 >= args.size()) return Usage(a + " needs a value");
      (a == "--config" ? config_path : a == "--steps" ? steps : report_dir) = args[++i];
    } else if (a == "--yes" || a == "-y") {
      yes = true;
    } else if (a == "--keep-worktrees") {
      keep = true;
    } else if (a == "--no-cache") {
      no_cache = true;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (config_path.empty()) return Usage("--config is required");
  auto config = workflow::ReadPremergeConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "parity premerge: %s\n", config.status().ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(config.status()).dump(2).c_str());
    return 2;
  }
  if (!steps.empty()) {
    try {
      size_t used = 0;
      config->steps = std::stoi(steps, &used);
      if (used != steps.size() || config->steps < 1) throw std::invalid_argument(steps);
    } catch (...) {
      return Usage("--steps expects a positive integer, got " + steps);
    }
  }
  if (keep) config->cleanup = false;
  if (!report_dir.empty()) config->report_dir = std::filesystem::absolute(report_dir).lexically_normal();

  // The repository and report directory the user's config names are the user's folders;
  // its commands, hosts and mail go through the policy like any tool argument.
  auto user_policy = LoadUserPolicy(policy_flags, {config->repo, config->report_dir}, "config " + config_path);
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity premerge: %s\n", user_policy.status().ToString().c_str());
    return 2;
  }

  InterruptCancels interrupt;  // Ctrl-C stops the trainings, then the worktrees are removed
  PipelineDisplay display("premerge", isatty(STDERR_FILENO) == 1);
  tools::InProcessToolRunner runner(config->report_dir, [&display](double done, std::optional<double> total,
                                                            const std::string& message) {
    display.Progress(done, total, message);
  });
  runner.SetPolicy(*user_policy, TerminalPrompt(yes));
  runner.SetCancellation(interrupt.token());
  workflow::PremergeOptions options;
  options.assume_yes = yes;
  options.no_cache = no_cache;
  options.cancel = interrupt.token();
  auto outcome = workflow::RunPremerge(*config, options, runner, display);
  display.Finish();
  int code = workflow::PremergeExitCode(outcome);
  if (!outcome.ok()) {
    std::fprintf(stderr, "parity premerge: stopped: %s\n", outcome.status().ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(outcome.status()).dump(2).c_str());
    return code;
  }
  for (const auto& d : outcome->determinism) {
    std::fprintf(stderr, "%s: gate 1 %s — %s%s\n", d.config.c_str(), d.gate1.c_str(), d.reason.c_str(),
                 d.from_cache ? (" (" + std::to_string(d.from_cache) + " baseline run(s) from the cache)").c_str() : "");
  }
  for (const auto& c : outcome->cases) std::fprintf(stderr, "%s: %s — %s\n", c.config.c_str(), c.verdict.c_str(), c.reason.c_str());
  std::fprintf(stderr, "premerge verdict: %s (report directory %s)\n", outcome->verdict.c_str(),
               config->report_dir.string().c_str());
  std::printf("%s\n", workflow::PremergeOutcomeJson(*outcome).dump(2).c_str());
  return code;
}

}  // namespace parity::cli
