// parity hunt --config config.json [--max-iterations N] [--tolerance T] [--report-dir D]
// [--yes] [--keep-worktrees] [--language zh|en]: PrecisionComparer's root-cause loop as one
// non-interactive run (domain/workflow/hunt.h), its sides local or over SSH. The report
// directory defaults to <test code_path>/numerical_report, or ./numerical_report when the
// test side is remote. stderr: a progress bar on a terminal, plain
// lines otherwise; stdout: the outcome as JSON. SIGINT/SIGTERM cancel the running training,
// and the probes are reverted before parity exits.
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "cli/commands.h"
#include "cli/pipeline_display.h"
#include "cli/tool_runner.h"
#include "cli/workflow_commands.h"
#include "domain/workflow/hunt.h"

namespace parity::cli {

namespace {

using nlohmann::json;

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity hunt: %s\nusage: parity hunt --config config.json [--max-iterations N] [--tolerance T] "
               "[--report-dir DIR] [--yes] [--keep-worktrees] [--language zh|en]\n"
               "  exit status: 0 no divergence, 1 divergence located, 2 inconclusive or error\n",
               why.c_str());
  return kExitUsage;
}

CancellationSource* g_cancel = nullptr;

extern "C" void OnSignal(int) {
  if (g_cancel) g_cancel->Cancel();  // an atomic store: safe in a signal handler
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

json OutcomeJson(const workflow::HuntOutcome& o) {
  return {{"verdict", o.verdict},
          {"explanation", o.explanation},
          {"located", o.located},
          {"baseline_commit", o.baseline_commit},
          {"candidate_commit", o.candidate_commit},
          {"iterations", o.hunt.value("iterations", json::array()).size()},
          {"outputs", o.report.value("outputs", json::object())},
          {"warnings", o.warnings}};
}

}  // namespace

int HuntCommand(const std::vector<std::string>& args) {
  std::string config_path, report_dir, max_iterations, tolerance, language = "zh";
  bool yes = false, keep = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--config" || a == "--report-dir" || a == "--max-iterations" || a == "--tolerance" || a == "--language") {
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

  CancellationSource cancel;
  g_cancel = &cancel;
  options.cancel = cancel.token();
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  PipelineDisplay display("hunt", isatty(STDERR_FILENO) == 1);
  InProcessToolRunner runner(options.report_dir, [&display](double done, std::optional<double> total,
                                                            const std::string& message) {
    display.Progress(done, total, message);
  });
  runner.SetCancellation(cancel.token());
  auto outcome = workflow::RunHunt(*config, options, runner, display);
  display.Finish();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_cancel = nullptr;
  int code = workflow::HuntExitCode(outcome);
  if (!outcome.ok()) {
    std::fprintf(stderr, "parity hunt: stopped: %s\n", outcome.status().ToString().c_str());
    std::printf("%s\n", PipelineErrorJson(outcome.status()).dump(2).c_str());
    return code;
  }
  std::fprintf(stderr, "hunt verdict: %s — %s (report directory %s)\n", outcome->verdict.c_str(),
               outcome->explanation.c_str(), options.report_dir.string().c_str());
  std::printf("%s\n", OutcomeJson(*outcome).dump(2).c_str());
  return code;
}

}  // namespace parity::cli
