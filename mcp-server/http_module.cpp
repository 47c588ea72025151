#include "mcp-server/http_module.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

// The module's bytes (mcp-server/module/http_blob.cpp.in, linked into the parity binary
// only): weak, so other programs linking the protocol layer get a clear error instead.
extern "C" __attribute__((weak)) const char parity_http_module_begin[];
extern "C" __attribute__((weak)) const char parity_http_module_end[];

namespace parity::mcp {

namespace {

struct Loaded {
  HttpModuleEntry entry = nullptr;
  Status error;
};

Loaded Load() {
  Loaded loaded;
  if (&parity_http_module_begin == nullptr || &parity_http_module_end == nullptr) {
    loaded.error = Internal("this program has no HTTP transport module embedded (only the parity binary has)");
    return loaded;
  }
  // dlopen needs a file: an anonymous in-memory one, so nothing is written to disk and no
  // second file has to travel with the binary.
  size_t size = static_cast<size_t>(parity_http_module_end - parity_http_module_begin);
  int fd = memfd_create(kHttpModuleFile, MFD_CLOEXEC);
  if (fd < 0) {
    loaded.error = Unavailable(std::string("memfd_create for the HTTP transport module failed: ") + std::strerror(errno));
    return loaded;
  }
  for (size_t written = 0; written < size;) {
    ssize_t n = write(fd, parity_http_module_begin + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      loaded.error = Unavailable(std::string("writing the HTTP transport module to memory failed: ") +
                                 std::strerror(errno));
      close(fd);
      return loaded;
    }
    written += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  // RTLD_LOCAL: cpp-httplib and OpenSSL stay out of the global namespace; the module's
  // own references to the protocol layer resolve against the binary's exported symbols.
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  close(fd);  // the mapping keeps the memory file alive
  if (module == nullptr) {
    const char* why = dlerror();
    loaded.error = Unavailable(std::string("cannot load the embedded HTTP transport module: ") +
                               (why ? why : "unknown dlopen error"))
                       .WithHint("its libraries come from Debian: apt-get install libcpp-httplib0.11 (scripts/install-deps)");
    return loaded;
  }
  loaded.entry = reinterpret_cast<HttpModuleEntry>(dlsym(module, kHttpModuleEntry));
  if (loaded.entry == nullptr) {
    loaded.error = Internal(std::string("the embedded HTTP transport module has no ") + kHttpModuleEntry + "; it is not parity's HTTP transport module");
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
    return Unavailable("the embedded HTTP transport module comes from another build (binary: " + stamp +
                       ")")
        .WithHint("a build bug: rebuild parity");
  }
  return std::unique_ptr<HttpTransport>(transport);
}

}  // namespace parity::mcp
