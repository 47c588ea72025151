#include "support/curl_dl.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "support/cancel.h"

namespace parity {
namespace {

struct Loaded {
  CurlApi api{};
  Status error;
};

template <typename Fn>
bool Bind(void* library, const char* symbol, Fn& slot, std::string& missing) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (slot == nullptr) missing += missing.empty() ? symbol : std::string(", ") + symbol;
  return slot != nullptr;
}

Loaded Load() {
  Loaded loaded;
  constexpr const char* kLibrary = "libcurl.so.4";
  // RTLD_LOCAL: libcurl's symbols stay out of the global namespace of a process that
  // may also link other TLS libraries.
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = Unavailable(std::string("cannot load ") + kLibrary + ": " + (why ? why : "unknown dlopen error") +
                               "; install libcurl (Debian: apt-get install libcurl4)");
    return loaded;
  }
  std::string missing;
  CurlApi& api = loaded.api;
  CURLcode (*global_init)(long) = nullptr;
  Bind(library, "curl_global_init", global_init, missing);
  Bind(library, "curl_easy_init", api.easy_init, missing);
  Bind(library, "curl_easy_setopt", api.easy_setopt, missing);
  Bind(library, "curl_easy_perform", api.easy_perform, missing);
  Bind(library, "curl_easy_getinfo", api.easy_getinfo, missing);
  Bind(library, "curl_easy_cleanup", api.easy_cleanup, missing);
  Bind(library, "curl_easy_strerror", api.easy_strerror, missing);
  Bind(library, "curl_slist_append", api.slist_append, missing);
  Bind(library, "curl_slist_free_all", api.slist_free_all, missing);
  if (!missing.empty()) {
    loaded.error = Unavailable(std::string(kLibrary) + " lacks " + missing + "; it is older than parity needs (7.62+)");
    return loaded;
  }
  // Once per process, before any other thread uses libcurl (call_once below guarantees it).
  if (CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    loaded.error = Unavailable(std::string("curl_global_init failed: ") + api.easy_strerror(rc));
  }
  return loaded;
}

}  // namespace

int CurlAbortWhenCancelled(void* cancellation_token, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const CancellationToken*>(cancellation_token)->cancelled() ? 1 : 0;
}

Result<const CurlApi*> LoadCurl() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = Load(); });
  if (!loaded.error.ok()) return loaded.error;
  return &loaded.api;
}

}  // namespace parity
