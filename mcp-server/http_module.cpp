#include "mcp-server/http_module.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>

namespace parity::mcp {

namespace {

struct Loaded {
  HttpModuleEntry entry = nullptr;
  Status error;
};

Loaded Load() {
  Loaded loaded;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    loaded.error = Unavailable("cannot locate the parity binary (/proc/self/exe): " + ec.message() +
                               "; the HTTP transport module is found beside it");
    return loaded;
  }
  std::string path = (self.parent_path() / kHttpModuleFile).string();
  // RTLD_LOCAL: cpp-httplib and OpenSSL stay out of the global namespace; the module's
  // own references to the protocol layer resolve against the binary's exported symbols.
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (module == nullptr) {
    const char* why = dlerror();
    loaded.error = Unavailable("cannot load the HTTP transport module " + path + ": " +
                               (why ? why : "unknown dlopen error"))
                       .WithHint("it is built with parity (target parity_http) and must stay beside the parity binary");
    return loaded;
  }
  loaded.entry = reinterpret_cast<HttpModuleEntry>(dlsym(module, kHttpModuleEntry));
  if (loaded.entry == nullptr) {
    loaded.error = Unavailable(path + " has no " + kHttpModuleEntry + "; it is not parity's HTTP transport module");
  }
  return loaded;  // never dlclose'd: transports and their threads may outlive any scope here
}

}  // namespace

Result<std::unique_ptr<HttpTransport>> LoadHttpTransport(const HttpOptions& options) {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (!loaded.error.ok()) return loaded.error;
  std::string stamp = HttpModuleStamp();
  HttpTransport* transport = loaded.entry(stamp.c_str(), &options);
  if (transport == nullptr) {
    return Unavailable("the HTTP transport module beside the parity binary comes from another build (binary: " + stamp +
                       ")")
        .WithHint("rebuild parity and parity-http.so together");
  }
  return std::unique_ptr<HttpTransport>(transport);
}

}  // namespace parity::mcp
