// parity bisect --config premerge.json [--good REF] [--bad REF] [--case NAME]
// [--hunt-config config.json] [--into-merges] [--jobs K] [--steps N] [--report-dir DIR]
// [--yes] [--keep-worktrees]: the first commit whose numbers differ from the good one's,
// then its line (domain/workflow/bisect.h). stderr: a progress bar on a terminal (commits
// left, ~trainings left), plain lines otherwise; stdout: the outcome as JSON.
// SIGINT/SIGTERM cancel the running trainings.
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "cli/pipeline_display.h"
#include "cli/user_policy.h"
#include "cli/workflow_commands.h"
#include "domain/workflow/bisect.h"
#include "tools/pipeline_runner.h"

namespace parity::cli {

namespace {

using nlohmann::json;

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity bisect: %s\nusage: parity bisect --config premerge.json [--good REF] [--bad REF] [--case NAME] "
               "[--hunt-config config.json] [--into-merges] [--jobs K] [--steps N] [--report-dir DIR] [--yes] "
               "[--keep-worktrees] [--policy FILE] [--allow-folder DIR]...\n"
               "  exit status: 0 nothing changes the numbers, 1 the culprit (or a skipped range holding it) named,\n"
               "  2 undecided or error\n",
               why.c_str());
  return kExitUsage;
}

bool PositiveInt(const std::string& text, int& out) {
  try {
    size_t used = 0;
    out = std::stoi(text, &used);
    return used == text.size() && out >= 1;
  } catch (...) {
    return false;
  }
}

// An error before or during the bisect: its text on stderr, its JSON on stdout.
int Stopped(const Status& s, const char* when = "") {
  std::fprintf(stderr, "parity bisect: %s%s\n", when, s.ToString().c_str());
  std::printf("%s\n", PipelineErrorJson(s).dump(2).c_str());
  return 2;
}

json OutcomeJson(const workflow::BisectOutcome& o) {
  json j = workflow::BisectJson(o);
  for (auto& c : j["commits"]) c.erase("diff");
  if (j["culprit"].is_object()) j["culprit"].erase("diff");  // the diff is in bisect.json and bisect.md
  for (auto& s : j["suspects"]) s.erase("diff");
  j["outputs"] = {{"json", o.report_json}, {"markdown", o.report_md}};
  return j;
}

}  // namespace

int BisectCommand(const std::vector<std::string>& args) {
  std::string config_path, report_dir, steps, jobs, good, bad, case_name, hunt_path;
  bool yes = false, keep = false, into_merges = false;
  PolicyFlags policy_flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (a == "--config" || a == "--report-dir" || a == "--steps" || a == "--jobs" || a == "--good" || a == "--bad" ||
               a == "--case" || a == "--hunt-config") {
      if (i + 1 >= args.size()) return Usage(a + " needs a value");
      std::string& target = a == "--config" ? config_path : a == "--report-dir" ? report_dir : a == "--steps" ? steps
                            : a == "--jobs" ? jobs : a == "--good" ? good : a == "--bad" ? bad : a == "--case" ? case_name
                                                                                                     : hunt_path;
      target = args[++i];
    } else if (a == "--yes" || a == "-y") {
      yes = true;
    } else if (a == "--keep-worktrees") {
      keep = true;
    } else if (a == "--into-merges") {
      into_merges = true;
    } else {
      return Usage("unknown option " + a);
    }
  }
  if (config_path.empty()) return Usage("--config is required");
  auto config = workflow::ReadPremergeConfig(config_path);
  if (!config.ok()) return Stopped(config.status());
  int number = 0;
  if (!steps.empty()) {
    if (!PositiveInt(steps, number)) return Usage("--steps expects a positive integer, got " + steps);
    config->steps = number;
  }
  workflow::BisectOptions options;
  if (!jobs.empty()) {
    if (!PositiveInt(jobs, number)) return Usage("--jobs expects a positive integer, got " + jobs);
    options.parallel = static_cast<size_t>(number);
  }
  if (!report_dir.empty()) config->report_dir = std::filesystem::absolute(report_dir).lexically_normal();
  if (!good.empty()) options.good = good;
  if (!bad.empty()) options.bad = bad;
  if (!case_name.empty()) options.case_name = case_name;
  options.into_merges = into_merges;
  options.assume_yes = yes;
  options.keep_worktrees = keep;

  std::vector<std::filesystem::path> folders = {config->repo, config->report_dir};
  if (!hunt_path.empty()) {
    auto hunt = workflow::ReadComparerConfig(hunt_path);
    if (!hunt.ok()) return Stopped(hunt.status());
    if (hunt->baseline.mode != "local" || hunt->test.mode != "local") {
      return Usage("--hunt-config: bisect's hunt runs both sides locally, in the bisected repository (run `parity hunt` "
                   "for remote sides)");
    }
    for (const auto& dir : {hunt->baseline_data_dir, hunt->test_data_dir, hunt->compare_output_dir}) {
      if (!dir.empty()) folders.push_back(dir);
    }
    options.hunt = *hunt;
  }
  // The repository and folders the user's config files name are the user's; the commands
  // and hosts go through the policy like any tool argument.
  auto user_policy = LoadUserPolicy(policy_flags, folders, "config " + config_path);
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity bisect: %s\n", user_policy.status().ToString().c_str());
    return 2;
  }

  std::optional<InterruptCancels> interrupt(std::in_place);
  options.cancel = interrupt->token();
  PipelineDisplay display("bisect", isatty(STDERR_FILENO) == 1);
  tools::InProcessToolRunner runner(config->report_dir, [&display](double done, std::optional<double> total,
                                                            const std::string& message) {
    display.Progress(done, total, message);
  });
  runner.SetCancellation(interrupt->token());
  runner.SetPolicy(*user_policy, TerminalPrompt(yes));
  auto outcome = workflow::RunBisect(*config, options, runner, display);
  display.Finish();
  interrupt.reset();
  int code = workflow::BisectExitCode(outcome);
  if (!outcome.ok()) return Stopped(outcome.status(), "stopped: ");
  std::fprintf(stderr, "bisect: %s — %s\n  %zu probe(s), %zu training(s); report %s\n", outcome->answer.c_str(),
               outcome->explanation.c_str(), outcome->probes.size(), outcome->trainings, outcome->report_md.c_str());
  if (outcome->hunt) {
    std::fprintf(stderr, "hunt: %s — %s\n", outcome->hunt->verdict.c_str(), outcome->hunt->explanation.c_str());
  }
  std::printf("%s\n", OutcomeJson(*outcome).dump(2).c_str());
  return code;
}

}  // namespace parity::cli
