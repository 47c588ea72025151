// mcp_latency: round-trip latency of sequential MCP requests and the server's resident
// memory, over stdio or Streamable HTTP. A lean native client, so that what is measured
// is the server and not the client, and so that parity and the reference server are
// driven by exactly the same code. Prints one JSON line:
//   {"transport","method","calls","p50_us","p99_us","mean_us","rss_idle_kib","rss_after_kib"}
// rss_idle_kib is VmRSS after the handshake and a short pause; rss_after_kib after the calls.
//
// usage: mcp_latency [--tool NAME [--args JSON]] [--calls N] [--warmup N]
//                    (--stdio | --http [--env K=V]...) -- CMD [ARGS...]
// Without --tool each request is a ping. With --http, "{port}" in ARGS and in --env values
// is replaced by a free loopback port and requests go to http://127.0.0.1:PORT/mcp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string tool;  // empty: ping
  json args = json::object();
  int calls = 2000;
  int warmup = 200;
  bool http = false;
  std::map<std::string, std::string> env;
  std::vector<std::string> command;
};

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "mcp_latency: %s\n", message.c_str());
  std::exit(1);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  int i = 1;
  auto value = [&](const char* name) -> std::string {
    if (i + 1 >= argc) Fail(std::string(name) + " needs a value");
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      options.command.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--tool") options.tool = value("--tool");
    else if (arg == "--args") options.args = json::parse(value("--args"), nullptr, false);
    else if (arg == "--calls") options.calls = std::atoi(value("--calls").c_str());
    else if (arg == "--warmup") options.warmup = std::atoi(value("--warmup").c_str());
    else if (arg == "--stdio") options.http = false;
    else if (arg == "--http") options.http = true;
    else if (arg == "--env") {
      std::string kv = value("--env");
      auto eq = kv.find('=');
      if (eq == std::string::npos) Fail("--env expects K=V");
      options.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else Fail("unknown option " + arg);
  }
  if (options.command.empty()) Fail("no server command after --");
  if (options.args.is_discarded() || !options.args.is_object()) Fail("--args must be a JSON object");
  if (options.calls <= 0 || options.warmup < 0) Fail("--calls must be positive, --warmup not negative");
  return options;
}

std::string Substitute(std::string text, int port) {
  for (size_t at; (at = text.find("{port}")) != std::string::npos;) text.replace(at, 6, std::to_string(port));
  return text;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Fail("cannot find a free loopback port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The server process, in its own process group; stdin/stdout are pipes for stdio runs.
struct Server {
  pid_t pid = -1;
  int to_server = -1;
  int from_server = -1;

  ~Server() {
    if (to_server >= 0) ::close(to_server);
    if (pid > 0) {
      ::kill(-pid, SIGTERM);
      for (int i = 0; i < 100 && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

void Spawn(Server& server, const std::vector<std::string>& command, const std::map<std::string, std::string>& env,
           bool pipes) {
  int in[2], out[2];
  if (pipes && (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)) Fail("pipe failed");
  pid_t pid = ::fork();
  if (pid < 0) Fail("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    if (pipes) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
    } else {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
    }
    int null_err = ::open("/dev/null", O_WRONLY);
    ::dup2(null_err, STDERR_FILENO);  // the servers log there; keep the table clean
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::_Exit(127);
  }
  ::setpgid(pid, pid);
  server.pid = pid;
  if (pipes) {
    ::close(in[0]);
    ::close(out[1]);
    server.to_server = in[1];
    server.from_server = out[0];
  }
}

long RssKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  Fail("no VmRSS for pid " + std::to_string(pid));
}

// Newline-delimited JSON-RPC over the server's pipes.
class StdioChannel {
 public:
  explicit StdioChannel(Server& server) : server_(server) {}

  void Send(const json& message) {
    std::string line = message.dump() + "\n";
    for (size_t done = 0; done < line.size();) {
      ssize_t n = ::write(server_.to_server, line.data() + done, line.size() - done);
      if (n <= 0) Fail("write to the server failed (did it exit?)");
      done += static_cast<size_t>(n);
    }
  }

  // Reads lines until the response carrying `id`; notifications are skipped.
  json Await(const json& id) {
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl == std::string::npos) {
        char chunk[65536];
        ssize_t n = ::read(server_.from_server, chunk, sizeof chunk);
        if (n <= 0) Fail("the server closed stdout");
        buffer_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      json message = json::parse(buffer_.substr(0, nl), nullptr, false);
      buffer_.erase(0, nl + 1);
      if (!message.is_discarded() && message.contains("id") && message["id"] == id) return message;
    }
  }

 private:
  Server& server_;
  std::string buffer_;
};

// JSON-RPC over Streamable HTTP; the answer may be a JSON body or an SSE stream.
class HttpChannel {
 public:
  explicit HttpChannel(int port) : client_("127.0.0.1", port) {
    client_.set_keep_alive(true);
    client_.set_tcp_nodelay(true);  // else delayed ACKs add ~40 ms to every round trip
    client_.set_read_timeout(30, 0);
  }

  json Call(const json& message) {
    httplib::Headers headers{{"Accept", "application/json, text/event-stream"}};
    if (!session_.empty()) headers.emplace("Mcp-Session-Id", session_);
    if (initialized_) headers.emplace("MCP-Protocol-Version", "2025-11-25");
    auto response = client_.Post("/mcp", headers, message.dump(), "application/json");
    if (!response) Fail("HTTP request failed: " + httplib::to_string(response.error()));
    if (response->has_header("Mcp-Session-Id")) session_ = response->get_header_value("Mcp-Session-Id");
    if (!message.contains("id")) return json();
    if (response->status != 200) Fail("HTTP " + std::to_string(response->status) + ": " + response->body.substr(0, 300));
    return FindResponse(response->body, message["id"]);
  }
  void MarkInitialized() { initialized_ = true; }

 private:
  static json FindResponse(const std::string& body, const json& id) {
    json whole = json::parse(body, nullptr, false);
    if (!whole.is_discarded()) return whole;
    size_t at = 0;
    while ((at = body.find("data:", at)) != std::string::npos) {
      size_t end = body.find('\n', at);
      json message = json::parse(body.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5),
                                 nullptr, false);
      if (!message.is_discarded() && message.contains("id") && message["id"] == id) return message;
      at = end == std::string::npos ? body.size() : end;
    }
    Fail("no response for id " + id.dump() + " in: " + body.substr(0, 300));
  }

  httplib::Client client_;
  std::string session_;
  bool initialized_ = false;
};

json Request(int id, const Options& options) {
  if (options.tool.empty()) return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}};
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
          {"params", {{"name", options.tool}, {"arguments", options.args}}}};
}

void CheckAnswer(const json& answer, int id) {
  if (!answer.contains("result") || answer["result"].value("isError", false)) {
    Fail("request " + std::to_string(id) + " failed: " + answer.dump().substr(0, 500));
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Options options = ParseOptions(argc, argv);
  const json initialize = {{"jsonrpc", "2.0"}, {"id", "init"}, {"method", "initialize"},
                           {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                                       {"clientInfo", {{"name", "mcp_latency"}, {"version", "1.0.0"}}}}}};
  const json initialized = {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}};

  Server server;
  std::function<json(const json&)> call;
  std::optional<StdioChannel> stdio;
  std::optional<HttpChannel> http;
  if (options.http) {
    int port = FreePort();
    std::vector<std::string> command;
    for (const auto& arg : options.command) command.push_back(Substitute(arg, port));
    std::map<std::string, std::string> env;
    for (const auto& [k, v] : options.env) env[k] = Substitute(v, port);
    Spawn(server, command, env, /*pipes=*/false);
    http.emplace(port);
    auto deadline = Clock::now() + std::chrono::seconds(20);
    for (;;) {
      httplib::Client probe("127.0.0.1", port);
      if (probe.Get("/mcp")) break;  // any HTTP answer means it listens
      if (Clock::now() > deadline || ::waitpid(server.pid, nullptr, WNOHANG) != 0) Fail("HTTP server did not start");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    call = [&](const json& m) { return http->Call(m); };
  } else {
    Spawn(server, options.command, options.env, /*pipes=*/true);
    stdio.emplace(server);
    call = [&](const json& m) {
      stdio->Send(m);
      return m.contains("id") ? stdio->Await(m["id"]) : json();
    };
  }

  json init = call(initialize);
  if (!init.contains("result")) Fail("initialize failed: " + init.dump().substr(0, 500));
  call(initialized);
  if (http) http->MarkInitialized();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  long rss_idle = RssKib(server.pid);

  std::vector<double> samples;
  samples.reserve(options.calls);
  for (int i = 0; i < options.warmup + options.calls; ++i) {
    json request = Request(i, options);
    auto started = Clock::now();
    json answer = call(request);
    double us = std::chrono::duration<double, std::micro>(Clock::now() - started).count();
    CheckAnswer(answer, i);
    if (i >= options.warmup) samples.push_back(us);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  long rss_after = RssKib(server.pid);

  std::sort(samples.begin(), samples.end());
  auto quantile = [&](double q) {
    return samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))];
  };
  json report = {{"transport", options.http ? "http" : "stdio"},
                 {"method", options.tool.empty() ? "ping" : "tools/call " + options.tool},
                 {"calls", options.calls},
                 {"p50_us", std::lround(quantile(0.5))},
                 {"p99_us", std::lround(quantile(0.99))},
                 {"mean_us", std::lround(std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size())},
                 {"rss_idle_kib", rss_idle},
                 {"rss_after_kib", rss_after}};
  std::printf("%s\n", report.dump().c_str());
  return 0;
}
