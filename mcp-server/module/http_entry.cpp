// The entry point of parity-http.so (see mcp-server/http_module.h): built into the
// module only, never into parity_mcp.
#include <cstring>

#include "mcp-server/http_module.h"

extern "C" __attribute__((visibility("default"))) parity::mcp::HttpTransport* parity_mcp_new_http_transport(
    const char* build_stamp, const parity::mcp::HttpOptions* options) {
  // Compared before `options` is read: its layout is only known to match when the stamps do.
  if (build_stamp == nullptr || std::strcmp(build_stamp, parity::mcp::HttpModuleStamp().c_str()) != 0) return nullptr;
  return new parity::mcp::HttpTransport(*options);
}
