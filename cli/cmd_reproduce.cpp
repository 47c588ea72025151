#include "cli/cmd_reproduce.h"

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "cli/user_policy.h"
#include "domain/report/reproduce.h"
#include "support/cancel.h"

namespace parity::cli {

namespace {

constexpr const char* kUsage =
    "usage: parity reproduce REPRODUCE.json|REPORT_DIR --work-dir DIR [--parity PATH] [--yes] [--policy FILE]\n"
    "       parity reproduce REPRODUCE.json|REPORT_DIR --print\n"
    "  REPORT_DIR means REPORT_DIR/report/reproduce.json (written by render_report).\n"
    "  Clones the recorded repository into DIR/repo (the original is only read), points the\n"
    "  recorded refs at their commits there, checks out both commits as worktrees under\n"
    "  DIR/worktrees, extracts the infra files into both, and runs every recorded step with its\n"
    "  working directory and environment, recorded paths mapped into DIR: the trainings, the\n"
    "  checkpoint move, and `parity call` steps (compare_logs, msprobe_first_diff), which write\n"
    "  into DIR/numerical_report. Inputs the rerun wrote under new run-stamped names\n"
    "  (TensorBoard event files) are found again and the substitution printed. A step that\n"
    "  would run outside DIR is refused. --print (or --dry-run) shows the steps, runs nothing.\n"
    "  The file is not the user's word: a recorded training runs only when the user's policy\n"
    "  allows it (--policy FILE, --allow-folder DIR) or the user accepts it at the terminal\n"
    "  (--yes: never asks); `parity call` steps check their own tool's policy.\n";

CancellationSource* g_interrupt = nullptr;

void OnInterrupt(int) {
  if (g_interrupt) g_interrupt->Cancel();  // the running step's process group is then killed
}

// A recorded step: parity's own housekeeping of the exact recorded shape (its paths were
// checked to lie inside the work directory), a `parity call` (the child checks its tool
// against the policy itself, with no terminal to ask on), or a command the policy allows
// or the user accepts now.
Status AuthorizeStep(const policy::Policy& policy, const std::function<Result<nlohmann::json>(const nlohmann::json&)>& prompt,
                     const std::string& parity, const nlohmann::json& step, const ProcessOptions& p) {
  const std::string action = step.value("action", "");
  const auto& a = p.argv;
  if (action == "clear_checkpoint" && a.size() == 4 && a[0] == "rm" && a[1] == "-rf" && a[2] == "--") return Status::Ok();
  if (action == "move_checkpoint" && a.size() == 5 && a[0] == "mv" && a[1] == "-T" && a[2] == "--") return Status::Ok();
  if (a.size() >= 2 && a[0] == parity && a[1] == "call") return Status::Ok();
  policy::RunAction run{"parity reproduce: a recorded step (" + step.value("tool", std::string("?")) + " " + action + ")",
                        a, p.cwd.string(), p.env_set, "local", false};
  policy::Decision d = policy.CheckRun(run);
  if (d.allowed()) return Status::Ok();
  Status refused = policy::Refused("the recorded command is outside the user's policy: " + d.reason)
                       .WithEvidence("action", policy::Describe(run))
                       .WithEvidence("policy_line", d.allow_with.dump())
                       .WithHint("nothing was run; add the policy line to your policy file, or run without --yes "
                                 "at a terminal to confirm it");
  if (d.verdict == policy::Decision::Verdict::kRefused || !prompt) return refused;
  PARITY_ASSIGN_OR_RETURN(nlohmann::json answer, prompt({{"message", policy::Describe(run) + "\n" + d.reason}}));
  if (answer.value("action", "") != "accept") return Cancelled("the user declined the recorded command");
  return Status::Ok();
}

}  // namespace

int ReproduceCommand(const std::vector<std::string>& args) {
  report::ReplayOptions o;
  PolicyFlags policy_flags;
  bool yes = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) {
        std::fprintf(stderr, "parity reproduce: %s\n%s", flag_error.c_str(), kUsage);
        return 2;
      }
    } else if (a == "--yes" || a == "-y") {
      yes = true;
    } else if (a == "--work-dir" && i + 1 < args.size()) {
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
  // The work directory is the user's (named on this command line); nothing else is widened.
  auto user_policy = LoadUserPolicy(policy_flags, {std::filesystem::absolute(o.work_dir)}, "--work-dir");
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity reproduce: %s\n", user_policy.status().ToString().c_str());
    return 1;
  }
  std::string parity = o.parity_binary.empty() ? std::filesystem::read_symlink("/proc/self/exe", ec).string()
                                               : o.parity_binary;
  auto prompt = TerminalPrompt(yes);
  std::shared_ptr<const policy::Policy> checked = *user_policy;
  o.authorize = [checked, prompt, parity](const nlohmann::json& step, const ProcessOptions& p) {
    return AuthorizeStep(*checked, prompt, parity, step, p);
  };
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
