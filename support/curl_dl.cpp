#include "support/curl_dl.h"

#include <mutex>
#include <string>

#include "support/cancel.h"
#include "support/dynamic_library.h"

namespace parity {
namespace {

struct Loaded {
  CurlApi api{};
  Status error;
};

Loaded Load() {
  Loaded loaded;
  auto opened = SymbolBinder::Open("libcurl.so.4", "install libcurl (Debian: apt-get install libcurl4)");
  if (!opened.ok()) {
    loaded.error = opened.status();
    return loaded;
  }
  SymbolBinder& library = opened.value();
  CurlApi& api = loaded.api;
  CURLcode (*global_init)(long) = nullptr;
  library.Bind("curl_global_init", global_init);
  library.Bind("curl_easy_init", api.easy_init);
  library.Bind("curl_easy_setopt", api.easy_setopt);
  library.Bind("curl_easy_perform", api.easy_perform);
  library.Bind("curl_easy_getinfo", api.easy_getinfo);
  library.Bind("curl_easy_cleanup", api.easy_cleanup);
  library.Bind("curl_easy_strerror", api.easy_strerror);
  library.Bind("curl_slist_append", api.slist_append);
  library.Bind("curl_slist_free_all", api.slist_free_all);
  loaded.error = library.Finish("older than parity needs (7.62+)");
  if (!loaded.error.ok()) return loaded;
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
