// A transport moves bytes between clients and the Server; the only code that sees
// sockets or file descriptors. Serve blocks until the transport ends (stdin EOF, Stop());
// Stop may be called from any thread.
#pragma once

#include "mcp-server/server.h"
#include "support/status.h"

namespace parity::mcp {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Status Serve(Server& server) = 0;
  virtual void Stop() = 0;
};

}  // namespace parity::mcp
