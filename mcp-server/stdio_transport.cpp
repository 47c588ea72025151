#include "mcp-server/stdio_transport.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

namespace parity::mcp {

namespace {

class FdSink : public Sink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  bool Send(const json& message) override {
    std::string line = DumpLine(message);
    line.push_back('\n');
    std::lock_guard lock(mutex_);
    if (broken_) return false;
    size_t off = 0;
    while (off < line.size()) {
      ssize_t n = ::write(fd_, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken_ = true;
        return false;
      }
      off += static_cast<size_t>(n);
    }
    return true;
  }

 private:
  int fd_;
  std::mutex mutex_;
  bool broken_ = false;
};

}  // namespace

Status StdioTransport::Serve(Server& server) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed stdout must be an error value, not a signal
  auto sink = std::make_shared<FdSink>(out_fd_);
  auto connection = std::make_shared<Connection>(sink);
  server.AddConnection(connection);
  Envelope env{connection, sink, std::nullopt, false};

  std::string line;
  bool discarding = false;  // inside an over-long line
  char buf[65536];
  Status status;
  while (!stop_) {
    pollfd pfd{in_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 200);
    if (ready < 0 && errno != EINTR) {
      status = Unavailable(std::string("stdin: ") + std::strerror(errno));
      break;
    }
    if (ready <= 0) continue;
    ssize_t n = ::read(in_fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // EOF (or a read error: the client is gone either way)
    for (ssize_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c != '\n') {
        if (discarding) continue;
        line.push_back(c);
        if (line.size() > max_line_bytes_) {
          discarding = true;
          line.clear();
          sink->Send(ErrorResponse(nullptr, RpcError{rpc::kInvalidRequest,
              "line exceeds the limit of " + std::to_string(max_line_bytes_) + " bytes; skipped", nullptr}));
        }
        continue;
      }
      if (discarding) {
        discarding = false;
        continue;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") != std::string::npos) server.HandleRaw(line, env, max_line_bytes_);
      line.clear();
    }
  }
  // EOF: answers from the client can no longer arrive. Work in flight may still finish and
  // be answered (`parity serve < requests.jsonl`) within the grace period; then it is
  // cancelled, as by the client (a training started with wait=false keeps running), and
  // what still runs after that is left to the process exit (the caller checks WaitIdleFor).
  connection->Close();
  if (!server.WaitIdleFor(drain_grace_)) {
    connection->CancelAll();
    server.CancelTasks();
    server.WaitIdleFor(cancel_grace_);
  }
  connection->CancelAll();  // open subscriptions end with the process
  return status;
}

}  // namespace parity::mcp
