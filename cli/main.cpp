// parity: the MCP server and the command line of the same binary.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cache_command.h"
#include "cli/cmd_reproduce.h"
#include "cli/commands.h"
#include "cli/install_command.h"
#include "cli/user_policy.h"
#include "cli/workflow_commands.h"
#include "support/version.h"

namespace {

constexpr const char* kUsage =
    "usage: parity <command> [options]\n"
    "  serve [--http HOST:PORT] [--token-file F] [--report-dir DIR]   MCP server (stdio by default)\n"
    "  policy show [--policy FILE] [--allow-folder DIR]...\n"
    "                                            the user's policy every verb runs under, as JSON\n"
    "  (serve, call, premerge, hunt, bisect and reproduce take --policy FILE and --allow-folder DIR too)\n"
    "  tools                                     every tool with its schemas, as JSON\n"
    "  call TOOL 'JSON' [--answers FILE.json] [--report-dir DIR]\n"
    "                                            run one tool in-process; structured result on stdout\n"
    "  install (--claude-code [--scope user|project|local] | --claude-desktop) [--print]\n"
    "                                            register parity and its skills with an assistant\n"
    "  premerge --config premerge.json [--yes] [--steps N] [--report-dir DIR] [--no-cache]\n"
    "                                            the whole pre-merge accuracy check; exit 0 PASS, 1 FAIL, 2 other\n"
    "  cache list|clear [--dir DIR]              the baseline cache premerge keeps (~/.cache/parity)\n"
    "  hunt --config config.json [--max-iterations N] [--tolerance T] [--report-dir DIR] [--yes]\n"
    "                                            PrecisionComparer's root-cause loop; exit 0 no divergence,\n"
    "                                            1 divergence located, 2 other\n"
    "  bisect --config premerge.json [--good REF] [--bad REF] [--hunt-config config.json] [--jobs K] [--yes]\n"
    "                                            the first commit that changed the numbers, then its line;\n"
    "                                            exit 0 no change, 1 culprit named, 2 other\n"
    "  reproduce REPRODUCE.json|REPORT_DIR (--work-dir DIR | --print)\n"
    "                                            replay what a report's ledger recorded, in a fresh clone\n"
    "  --version\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return parity::cli::kExitUsage;
  }
  std::string command = args.front();
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--version" || command == "version") {
    std::printf("parity %s\n", PARITY_VERSION);
    return parity::cli::kExitOk;
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return parity::cli::kExitOk;
  }
  if (command == "tools") return parity::cli::ToolsCommand(rest);
  if (command == "call") return parity::cli::CallCommand(rest);
  if (command == "serve") return parity::cli::ServeCommand(rest);
  if (command == "policy") return parity::cli::PolicyCommand(rest);
  if (command == "install") return parity::cli::InstallCommand(rest);
  if (command == "premerge") return parity::cli::PremergeCommand(rest);
  if (command == "hunt") return parity::cli::HuntCommand(rest);
  if (command == "bisect") return parity::cli::BisectCommand(rest);
  if (command == "reproduce") return parity::cli::ReproduceCommand(rest);
  if (command == "cache") return parity::cli::CacheCommand(rest);
  std::fprintf(stderr, "parity: unknown command \"%s\"\n%s", command.c_str(), kUsage);
  return parity::cli::kExitUsage;
}
