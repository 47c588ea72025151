// parity serve: the MCP server over stdio (default) or Streamable HTTP.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/user_policy.h"
#include "mcp-server/http_module.h"
#include "mcp-server/stdio_transport.h"
#include "prompts/prompts.h"
#include "tools/all_tools.h"

namespace parity::cli {

namespace {

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity serve: %s\nusage: parity serve [--http HOST:PORT] [--token-file FILE] [--allow-host NAME]... "
               "[--report-dir DIR] [--policy FILE] [--allow-folder DIR]...\n",
               why.c_str());
  return kExitUsage;
}

Result<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read token file " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  std::string token = buf.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(0, 1);
  if (token.empty()) return InvalidArgument("token file " + path + " is empty");
  return token;
}

}  // namespace

int ServeCommand(const std::vector<std::string>& args) {
  std::string http, token_file, report_dir = "numerical_report";
  std::vector<std::string> allow_hosts;
  PolicyFlags policy_flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (a == "--http" || a == "--token-file" || a == "--report-dir" || a == "--allow-host") {
      if (i + 1 >= args.size()) return Usage(a + " needs a value");
      const std::string& v = args[++i];
      if (a == "--http") http = v;
      else if (a == "--token-file") token_file = v;
      else if (a == "--report-dir") report_dir = v;
      else allow_hosts.push_back(v);
    } else if (a == "--stdio") {
      // the default; accepted for clients configured with it
    } else {
      return Usage("unknown option " + a);
    }
  }
  // HTTP: SIGINT/SIGTERM stop the server from a thread of ours (httplib's stop is not
  // async-signal-safe). Blocked before any thread starts, so every thread inherits it.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  if (!http.empty()) pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto catalog = std::make_shared<mcp::Catalog>();
  for (auto& tool : tools::AllTools()) catalog->tools.Add(std::move(tool));
  for (auto& t : tools::AllResourceTemplates()) catalog->templates.Add(std::move(t));
  for (auto& prompt : prompts::AllPrompts(std::filesystem::current_path())) catalog->prompts.Add(std::move(prompt));
  // The user's policy, fixed before any client speaks (support/policy.h).
  auto user_policy = LoadUserPolicy(policy_flags, {std::filesystem::absolute(report_dir)}, "report directory");
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity serve: %s\n", user_policy.status().ToString().c_str());
    return kExitFailure;
  }
  mcp::ServerOptions options;
  options.report_dir = report_dir;
  options.policy = *user_policy;
  options.instructions =
      "parity proves that a code change keeps PyTorch training numerics identical and, when it does not, finds the "
      "operator and source line that broke them. Tools record what they do in the report directory's ledger.";
  mcp::Server server(options, catalog);

  if (http.empty()) {
    if (!token_file.empty()) return Usage("--token-file applies to --http only");
    mcp::StdioTransport stdio(STDIN_FILENO, STDOUT_FILENO);
    Status s = stdio.Serve(server);
    if (!s.ok()) std::fprintf(stderr, "parity serve: %s\n", s.ToString().c_str());
    return s.ok() ? kExitOk : kExitFailure;
  }

  mcp::HttpOptions http_options;
  size_t colon = http.rfind(':');
  if (colon == std::string::npos) return Usage("--http expects HOST:PORT, e.g. 127.0.0.1:8765");
  http_options.host = http.substr(0, colon);
  if (http_options.host.size() > 2 && http_options.host.front() == '[') {
    http_options.host = http_options.host.substr(1, http_options.host.size() - 2);
  }
  try {
    http_options.port = std::stoi(http.substr(colon + 1));
  } catch (...) {
    return Usage("--http: bad port in " + http);
  }
  if (http_options.port < 0 || http_options.port > 65535) return Usage("--http: bad port in " + http);
  http_options.allowed_hosts = allow_hosts;
  if (!token_file.empty()) {
    auto token = ReadToken(token_file);
    if (!token.ok()) return Usage("--token-file: " + token.status().message());
    http_options.bearer_token = *token;
  }
  // From parity-http.so: a stdio server never maps cpp-httplib (see mcp-server/http_module.h).
  auto loaded = mcp::LoadHttpTransport(http_options);
  if (!loaded.ok()) {
    std::fprintf(stderr, "parity serve: %s\n", loaded.status().ToString().c_str());
    return kExitFailure;
  }
  mcp::HttpTransport& transport = **loaded;
  Status bound = transport.Bind();
  if (!bound.ok()) {
    std::fprintf(stderr, "parity serve: %s\n", bound.ToString().c_str());
    return kExitFailure;
  }
  std::thread([&transport, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    transport.Stop();
  }).detach();
  std::fprintf(stderr, "parity: serving MCP on http://%s:%d%s%s\n", http.substr(0, colon).c_str(), transport.port(),
               http_options.path.c_str(), http_options.bearer_token ? " (bearer token required)" : "");
  Status s = transport.Serve(server);
  if (!s.ok()) std::fprintf(stderr, "parity serve: %s\n", s.ToString().c_str());
  return s.ok() ? kExitOk : kExitFailure;
}

}  // namespace parity::cli
