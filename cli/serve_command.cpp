// parity serve: the MCP server over stdio (default) or Streamable HTTP.
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/user_policy.h"
#include "mcp-server/http_transport.h"
#include "mcp-server/result_pages.h"
#include "mcp-server/stdio_transport.h"
#include "prompts/prompts.h"
#include "tools/all_tools.h"

namespace parity::cli {

namespace {

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "parity serve: %s\nusage: parity serve [--http HOST:PORT] [--token-file FILE] [--allow-host NAME]... "
               "[--max-sessions N] [--session-idle-timeout SECONDS] [--report-dir DIR] [--policy FILE] "
               "[--allow-folder DIR]...\n",
               why.c_str());
  return kExitUsage;
}

// The bearer tokens of a token file: one per line (blank lines and # comments skipped),
// so each client can have its own and a session stays bound to the one that opened it.
// The file must be the user's alone: a token readable by others is no secret.
Result<std::vector<std::string>> ReadTokens(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return NotFound("cannot open token file " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument("token file " + path + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return FailedPrecondition("token file " + path + " has mode " + mode + ": group or others may read or change it")
        .WithHint("chmod 600 " + path);
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || text.size() > (1u << 20)) {
      ::close(fd);
      return Unavailable("cannot read token file " + path);
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  std::vector<std::string> tokens;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t e = line.find_last_not_of(" \t\r");
    tokens.push_back(line.substr(b, e - b + 1));
  }
  if (tokens.empty()) return InvalidArgument("token file " + path + " holds no token");
  for (const auto& t : tokens) {
    if (t.size() < 16) return InvalidArgument("token file " + path + ": a token shorter than 16 characters is guessable");
  }
  return tokens;
}

// Whether a bind address only reaches this machine.
bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

// After the transport ended: a handler that ignores its cancellation must not keep the
// process alive (its client is gone), and the destructors would wait for it.
int Finish(mcp::Server& server, const Status& s) {
  if (!s.ok()) std::fprintf(stderr, "parity serve: %s\n", s.ToString().c_str());
  int code = s.ok() ? kExitOk : kExitFailure;
  server.CancelTasks();
  if (!server.WaitIdleFor(std::chrono::seconds(3))) {
    std::fprintf(stderr, "parity serve: request(s) still running after the transport ended and were cancelled; "
                         "exiting without waiting for them\n");
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace

int ServeCommand(const std::vector<std::string>& args) {
  std::string http, token_file, report_dir = "numerical_report";
  std::vector<std::string> allow_hosts;
  PolicyFlags policy_flags;
  size_t max_sessions = mcp::HttpOptions{}.max_sessions;
  int session_idle_s = mcp::HttpOptions{}.session_idle_timeout_s;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (a == "--http" || a == "--token-file" || a == "--report-dir" || a == "--allow-host" ||
               a == "--max-sessions" || a == "--session-idle-timeout") {
      if (i + 1 >= args.size()) return Usage(a + " needs a value");
      const std::string& v = args[++i];
      if (a == "--http") http = v;
      else if (a == "--token-file") token_file = v;
      else if (a == "--report-dir") report_dir = v;
      else if (a == "--allow-host") allow_hosts.push_back(v);
      else {
        char* end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 1 || n > 1000000) return Usage(a + ": expected a positive number, got " + v);
        if (a == "--max-sessions") max_sessions = static_cast<size_t>(n);
        else session_idle_s = static_cast<int>(n);
      }
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
  catalog->templates.Add(mcp::MakeResultPagesTemplate());  // results over the cap, in pages
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
    return Finish(server, stdio.Serve(server));
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
  http_options.max_sessions = max_sessions;
  http_options.session_idle_timeout_s = session_idle_s;
  if (!token_file.empty()) {
    auto tokens = ReadTokens(token_file);
    if (!tokens.ok()) {
      std::fprintf(stderr, "parity serve: --token-file: %s\n", tokens.status().ToString().c_str());
      return kExitUsage;
    }
    http_options.bearer_tokens = *tokens;
  }
  // Beyond loopback, the Host and Origin checks stop browsers but not a network client
  // (it writes any Host it likes): only a token tells the user's clients from others.
  if (!IsLoopback(http_options.host) && http_options.bearer_tokens.empty()) {
    return Usage("--http " + http + " listens beyond this machine: give --token-file FILE (bearer tokens, mode 0600)");
  }
  mcp::HttpTransport transport(http_options);
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
               http_options.path.c_str(), http_options.bearer_tokens.empty() ? "" : " (bearer token required)");
  return Finish(server, transport.Serve(server));
}

}  // namespace parity::cli
