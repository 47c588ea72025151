#include "cli/cmd_reproduce.h"

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "domain/report/reproduce.h"
#include "support/cancel.h"

namespace parity::cli {

namespace {

constexpr const char* kUsage =
    "usage: parity reproduce REPRODUCE.json|REPORT_DIR --work-dir DIR [--parity PATH]\n"
    "       parity reproduce REPRODUCE.json|REPORT_DIR --print\n"
    "  REPORT_DIR means REPORT_DIR/report/reproduce.json (written by render_report).\n"
    "  Clones the recorded repository into DIR/repo (the original is only read), points the\n"
    "  recorded refs at their commits there, checks out both commits as worktrees under\n"
    "  DIR/worktrees, extracts the infra files into both, and runs every recorded step with its\n"
    "  working directory and environment, recorded paths mapped into DIR: the trainings, the\n"
    "  checkpoint move, and `parity call` steps (compare_logs, msprobe_first_diff), which write\n"
    "  into DIR/numerical_report. Inputs the rerun wrote under new run-stamped names\n"
    "  (TensorBoard event files) are found again and the substitution printed. A step that\n"
    "  would run outside DIR is refused. --print (or --dry-run) shows the steps, runs nothing.\n";

CancellationSource* g_interrupt = nullptr;

void OnInterrupt(int) {
  if (g_interrupt) g_interrupt->Cancel();  // the running step's process group is then killed
}

}  // namespace

int ReproduceCommand(const std::vector<std::string>& args) {
  report::ReplayOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--work-dir" && i + 1 < args.size()) {
      o.work_dir = args[++i];
    } else if (a == "--parity" && i + 1 < args.size()) {
      o.parity_binary = args[++i];
    } else if (a == "--dry-run" || a == "--print") {
      o.dry_run = true;
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] != '-' && o.reproduce_json.empty()) {
      o.reproduce_json = a;
    } else {
      std::fprintf(stderr, "parity reproduce: unexpected argument \"%s\"\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.dry_run && o.work_dir.empty()) o.work_dir = "parity-reproduce";  // only shown, never created
  if (o.reproduce_json.empty() || o.work_dir.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(o.reproduce_json, ec)) o.reproduce_json /= "report/reproduce.json";
  CancellationSource interrupt;
  g_interrupt = &interrupt;
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  o.cancel = interrupt.token();
  o.print = [](const std::string& text) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  };
  Status s = report::Replay(o);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_interrupt = nullptr;
  if (!s.ok()) {
    std::fprintf(stderr, "parity reproduce: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace parity::cli
