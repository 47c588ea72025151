// stdio: newline-delimited JSON-RPC on two file descriptors. Nothing but protocol goes to
// the output; an over-long line is answered with an error and skipped; at EOF the
// transport lets in-flight work finish (client answers can no longer arrive) and returns.
#pragma once

#include <atomic>
#include <memory>

#include "mcp-server/transport.h"

namespace parity::mcp {

class StdioTransport : public Transport {
 public:
  StdioTransport(int in_fd, int out_fd, size_t max_line_bytes = kDefaultMaxMessageBytes)
      : in_fd_(in_fd), out_fd_(out_fd), max_line_bytes_(max_line_bytes) {}
  Status Serve(Server& server) override;
  void Stop() override { stop_ = true; }

 private:
  int in_fd_, out_fd_;
  size_t max_line_bytes_;
  std::atomic<bool> stop_{false};
};

}  // namespace parity::mcp
