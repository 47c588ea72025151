// libcurl, loaded on first use with dlopen("libcurl.so.4") instead of linked, so a process
// that never sends mail or calls an HTTP endpoint (`parity serve` at idle above all) does
// not map libcurl and the ~20 libraries it depends on (~3 MiB of resident pages; see
// docs/PERFORMANCE.md). The table holds exactly the functions parity calls; types and
// constants still come from <curl/curl.h>. Use it through LoadCurl() only.
#pragma once

#include <curl/curl.h>

#include "support/status.h"

namespace parity {

struct CurlApi {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// Loads libcurl once per process (thread-safe) and runs curl_global_init. The error
// (kUnavailable) names the library, dlerror()'s text and the package to install
// (Debian: libcurl4). Later calls return the same table or the same error.
[[nodiscard]] Result<const CurlApi*> LoadCurl();

// A CURLOPT_XFERINFOFUNCTION that aborts the transfer (CURLE_ABORTED_BY_CALLBACK) once the
// CancellationToken given as CURLOPT_XFERINFODATA is cancelled; needs CURLOPT_NOPROGRESS 0.
int CurlAbortWhenCancelled(void* cancellation_token, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

}  // namespace parity
