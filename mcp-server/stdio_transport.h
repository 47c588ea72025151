// stdio: newline-delimited JSON-RPC on two file descriptors. Nothing but protocol goes to
// the output; an over-long line is answered with an error and skipped; at EOF the
// transport lets in-flight work finish for a grace period (client answers can no longer
// arrive), then cancels it and returns after a second grace period even if a handler
// ignores the cancel (Server::WaitIdleFor tells the caller).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "mcp-server/transport.h"

namespace parity::mcp {

class StdioTransport : public Transport {
 public:
  StdioTransport(int in_fd, int out_fd, size_t max_line_bytes = kDefaultMaxMessageBytes)
      : in_fd_(in_fd), out_fd_(out_fd), max_line_bytes_(max_line_bytes) {}
  Status Serve(Server& server) override;
  void Stop() override { stop_ = true; }
  // At EOF: how long work in flight may run on before it is cancelled, and how long
  // cancelled work may take to stop before Serve returns anyway.
  void SetShutdownGrace(std::chrono::milliseconds drain, std::chrono::milliseconds cancel) {
    drain_grace_ = drain;
    cancel_grace_ = cancel;
  }

 private:
  int in_fd_, out_fd_;
  size_t max_line_bytes_;
  std::chrono::milliseconds drain_grace_{5000}, cancel_grace_{3000};
  std::atomic<bool> stop_{false};
};

}  // namespace parity::mcp
