// `parity serve --http` takes the Streamable HTTP transport from a module embedded in the
// parity binary (so parity stays one file), loaded from memory with dlopen only then. Debian's cpp-httplib is a shared
// library built with OpenSSL, zlib and brotli whose load-time initialiser runs
// OPENSSL_init_ssl (error strings, config, providers): linked into parity it would cost
// every stdio server ~2.5 MiB of resident pages for a transport it never uses (see
// docs/PERFORMANCE.md). The module holds only http_transport.cpp and http_exchange.cpp
// and resolves the rest of the protocol layer against the binary, which exports its
// parity:: symbols for it (mcp-server/module/exports.list).
#pragma once

#include <memory>

#include <string>

#include "mcp-server/http_transport.h"
#include "support/status.h"
#include "support/version.h"

namespace parity::mcp {

// Loads the module once per process and makes a transport. The error (kUnavailable)
// carries dlerror()'s text; a program without the embedded module, or a module from
// another build, is kInternal.
[[nodiscard]] Result<std::unique_ptr<HttpTransport>> LoadHttpTransport(const HttpOptions& options);

// The module's entry point and the build stamp both sides compare before using it.
inline constexpr const char* kHttpModuleEntry = "parity_mcp_new_http_transport";
inline constexpr const char* kHttpModuleFile = "parity-http.so";  // the in-memory file's name
using HttpModuleEntry = HttpTransport* (*)(const char* build_stamp, const HttpOptions* options);
// PARITY_VERSION plus the layouts the two sides share; a module from another build with
// a different HttpOptions layout is refused instead of misread. Internal linkage on
// purpose: each side computes it from its own compile-time view, where a shared symbol
// would resolve to the binary's copy on both sides.
[[maybe_unused]] static std::string HttpModuleStamp() {
  return std::string(PARITY_VERSION) + "/options:" + std::to_string(sizeof(HttpOptions)) +
         "/transport:" + std::to_string(sizeof(HttpTransport));
}

}  // namespace parity::mcp
