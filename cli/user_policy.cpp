#include "cli/user_policy.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/commands.h"

namespace parity::cli {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool TakePolicyFlag(const std::vector<std::string>& args, size_t& i, PolicyFlags& flags, std::string& error) {
  const std::string& a = args[i];
  if (a != "--policy" && a != "--allow-folder") return false;
  if (i + 1 >= args.size()) {
    error = a + " needs a value";
    return true;
  }
  const std::string& v = args[++i];
  if (a == "--policy") flags.file = fs::path(v);
  else flags.folders.push_back(fs::absolute(v));
  return true;
}

Result<std::shared_ptr<policy::Policy>> LoadUserPolicy(const PolicyFlags& flags, const std::vector<fs::path>& folders,
                                                       const std::string& folders_source) {
  policy::LoadOptions o;
  o.file = flags.file;
  o.working_directory = fs::current_path();
  o.extra_folders = flags.folders;
  PARITY_ASSIGN_OR_RETURN(policy::Policy loaded, policy::Load(o));
  for (const auto& f : folders) {
    if (!f.empty()) loaded.AddFolder(fs::absolute(f), true, folders_source);
  }
  policy::InstallChildEnvironment(loaded);
  return std::make_shared<policy::Policy>(std::move(loaded));
}

std::function<Result<json>(const json&)> TerminalPrompt(bool yes) {
  if (yes || isatty(STDIN_FILENO) != 1 || isatty(STDERR_FILENO) != 1) return {};
  return [](const json& params) -> Result<json> {
    std::ifstream tty("/dev/tty");
    if (!tty) return Unavailable("cannot open /dev/tty to ask the user");
    std::fprintf(stderr, "\n%s\nRun it? [y/N] ", params.value("message", "").c_str());
    std::fflush(stderr);
    std::string line;
    std::getline(tty, line);
    bool accept = line == "y" || line == "Y" || line == "yes";
    if (!accept) return json{{"action", "decline"}};
    return json{{"action", "accept"}, {"content", json::object()}};
  };
}

int PolicyCommand(const std::vector<std::string>& args) {
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "parity policy: %s\nusage: parity policy show [--policy FILE] [--allow-folder DIR]... "
                         "[--report-dir DIR]\n", why.c_str());
    return kExitUsage;
  };
  if (args.empty() || args[0] != "show") return usage("expected `show`");
  PolicyFlags flags;
  std::string report_dir = "numerical_report";
  for (size_t i = 1; i < args.size(); ++i) {
    std::string error;
    if (TakePolicyFlag(args, i, flags, error)) {
      if (!error.empty()) return usage(error);
    } else if (args[i] == "--report-dir" && i + 1 < args.size()) {
      report_dir = args[++i];
    } else {
      return usage("unknown option " + args[i]);
    }
  }
  auto loaded = LoadUserPolicy(flags, {fs::absolute(report_dir)}, "report directory");
  if (!loaded.ok()) {
    std::fprintf(stderr, "parity policy: %s\n", loaded.status().ToString().c_str());
    return kExitFailure;
  }
  std::printf("%s\n", (*loaded)->ToJson().dump(2).c_str());
  return kExitOk;
}

}  // namespace parity::cli
