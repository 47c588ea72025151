#include "support/curl_dl.h"

#include <string>

#include "support/cancel.h"
#include "support/dynamic_library.h"

namespace parity {
namespace {

Status BindCurl(SymbolBinder& library, CurlApi& api) {
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
  PARITY_RETURN_IF_ERROR(library.Finish("older than parity needs (7.62+)"));
  // Once per process, before any other thread uses libcurl (LoadOnce guarantees it).
  if (CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return Unavailable(std::string("curl_global_init failed: ") + api.easy_strerror(rc));
  }
  return Status::Ok();
}

}  // namespace

int CurlAbortWhenCancelled(void* cancellation_token, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const CancellationToken*>(cancellation_token)->cancelled() ? 1 : 0;
}

Result<const CurlApi*> LoadCurl() {
  return LoadOnce<CurlApi>("libcurl.so.4", "install libcurl (Debian: apt-get install libcurl4)", BindCurl);
}

}  // namespace parity
