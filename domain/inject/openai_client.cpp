#include "domain/inject/openai_client.h"

#include <algorithm>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/curl_dl.h"
#include "support/url.h"

namespace parity::inject {

namespace {

using json = nlohmann::json;

constexpr size_t kExcerptBytes = 600;
constexpr auto kMaxRetryAfter = std::chrono::seconds(30);

struct Sink {
  std::string body;
  size_t cap = 0;
  bool over = false;
};

size_t Collect(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t n = size * count;
  if (sink->body.size() + n > sink->cap) {
    sink->over = true;
    return 0;  // makes libcurl stop with CURLE_WRITE_ERROR
  }
  sink->body.append(data, n);
  return n;
}

// What one HTTP exchange gave.
struct Exchange {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string curl_error;
  bool over_cap = false;
  std::chrono::seconds retry_after{0};
};

Exchange PostOnce(const CurlApi& api, const ChatEndpoint& e, const std::string& url, const std::string& payload,
                  const CancellationToken& cancel) {
  Exchange out;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api.easy_init(), api.easy_cleanup);
  if (!curl) {
    out.code = CURLE_FAILED_INIT;
    out.curl_error = "libcurl could not be initialised";
    return out;
  }
  const std::string auth = "Authorization: Bearer " + e.api_key;
  curl_slist* headers = api.slist_append(nullptr, "Content-Type: application/json");
  headers = api.slist_append(headers, "Accept: application/json");
  headers = api.slist_append(headers, auth.c_str());
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers_guard(headers, api.slist_free_all);
  Sink sink;
  sink.cap = e.max_response_bytes;
  char error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  api.easy_setopt(c, CURLOPT_URL, url.c_str());
  api.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  api.easy_setopt(c, CURLOPT_POST, 1L);
  api.easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
  api.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  api.easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  api.easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  api.easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  api.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(e.connect_timeout.count()));
  api.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(e.timeout.count()));
  api.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  api.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, CurlAbortWhenCancelled);
  api.easy_setopt(c, CURLOPT_XFERINFODATA, &cancel);
  api.easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  out.code = api.easy_perform(c);
  api.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  curl_off_t retry_after = 0;
  if (api.easy_getinfo(c, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0) {
    out.retry_after = std::min<std::chrono::seconds>(std::chrono::seconds(retry_after), kMaxRetryAfter);
  }
  out.body = std::move(sink.body);
  out.over_cap = sink.over;
  if (out.code != CURLE_OK) out.curl_error = error[0] ? std::string(error) : std::string(api.easy_strerror(out.code));
  return out;
}

bool Retryable(const Exchange& x) {
  switch (x.code) {
    case CURLE_OK:
      return x.status == 429 || x.status >= 500;
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
      return true;
    default:
      return false;
  }
}

// Sleeps in short slices so a cancellation is seen promptly; false when cancelled.
bool SleepUnlessCancelled(std::chrono::milliseconds total, const CancellationToken& cancel) {
  auto until = std::chrono::steady_clock::now() + total;
  while (std::chrono::steady_clock::now() < until) {
    if (cancel.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !cancel.cancelled();
}

std::string Excerpt(std::string text, const std::string& secret) {
  if (!secret.empty()) {
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) text.replace(at, secret.size(), "***");
  }
  if (text.size() > kExcerptBytes) text = text.substr(0, kExcerptBytes) + "...";
  return text;
}

Status WithEvidence(Status s, const ChatEndpoint& e, const std::string& url, const Exchange& x, int attempts) {
  s.WithEvidence("url", RedactUrl(url)).WithEvidence("model", e.model);
  if (x.status != 0) s.WithEvidence("http_status", std::to_string(x.status));
  if (!x.body.empty()) s.WithEvidence("body_excerpt", Excerpt(x.body, e.api_key));
  if (!x.curl_error.empty()) s.WithEvidence("curl_error", Excerpt(x.curl_error, e.api_key));
  s.WithEvidence("attempts", std::to_string(attempts));
  return s;
}

Status Failure(const ChatEndpoint& e, const std::string& url, const Exchange& x, int attempts) {
  Status s;
  if (x.over_cap) {
    s = Unavailable("the chat endpoint's reply is larger than " + std::to_string(e.max_response_bytes) + " bytes");
  } else if (x.code == CURLE_OPERATION_TIMEDOUT) {
    s = DeadlineExceeded("the chat endpoint did not answer within the time limit (" +
                         std::to_string(e.timeout.count()) + " ms per attempt)");
  } else if (x.code != CURLE_OK) {
    s = Unavailable("the chat endpoint could not be reached: " + x.curl_error);
  } else if (x.status == 429 || x.status >= 500) {
    s = Unavailable("the chat endpoint answered HTTP " + std::to_string(x.status));
  } else {
    s = FailedPrecondition("the chat endpoint refused the request with HTTP " + std::to_string(x.status));
    if (x.status == 401 || x.status == 403) s.WithHint("check DEEPSEEK_API_KEY (the key itself is never shown)");
    else if (x.status == 404) s.WithHint("check the base URL (POST {base}/chat/completions) and the model name");
  }
  return WithEvidence(std::move(s), e, url, x, attempts);
}

}  // namespace

std::string RedactUrl(const std::string& url) {
  std::string out = url.substr(0, url.find_first_of("?#"));
  size_t start = out.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = out.find('/', start);
  size_t at = out.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at != std::string::npos && at >= start) out.erase(start, at + 1 - start);
  return out;
}

Status ValidateEndpoint(const ChatEndpoint& e) {
  const bool https = e.base_url.rfind("https://", 0) == 0, http = e.base_url.rfind("http://", 0) == 0;
  if (!https && !http) {
    return InvalidArgument("base_url \"" + RedactUrl(e.base_url) + "\" must start with https:// (or http:// to loopback)");
  }
  if (http && !IsLoopbackHost(UrlHost(e.base_url))) {
    return InvalidArgument("base_url: plain http is allowed only to a loopback host, not " + UrlHost(e.base_url))
        .WithHint("use https:// so the API key is not sent in clear text");
  }
  if (e.model.empty()) return InvalidArgument("model: empty");
  if (e.api_key.empty()) return FailedPrecondition("no API key (DEEPSEEK_API_KEY is not set)");
  if (e.max_attempts < 1) return InvalidArgument("max_attempts: must be at least 1");
  return Status::Ok();
}

Result<ChatReply> ChatComplete(const ChatEndpoint& e, const std::vector<ChatMessage>& messages, int max_tokens,
                               const CancellationToken& cancel) {
  PARITY_RETURN_IF_ERROR(ValidateEndpoint(e));
  PARITY_ASSIGN_OR_RETURN(const CurlApi* api, LoadCurl());
  std::string url = e.base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/chat/completions";
  json body = {{"model", e.model}, {"messages", json::array()}, {"temperature", 0},
               {"response_format", {{"type", "json_object"}}}, {"max_tokens", max_tokens}, {"stream", false}};
  for (const auto& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  const std::string payload = body.dump();

  Exchange x;
  int attempt = 0;
  auto backoff = e.backoff;
  while (true) {
    ++attempt;
    if (cancel.cancelled()) return Cancelled();
    x = PostOnce(*api, e, url, payload, cancel);
    if (x.code == CURLE_ABORTED_BY_CALLBACK && cancel.cancelled()) return Cancelled();
    if (x.code == CURLE_OK && x.status >= 200 && x.status < 300) break;
    if (!Retryable(x) || attempt >= e.max_attempts) return Failure(e, url, x, attempt);
    auto wait = std::max<std::chrono::milliseconds>(backoff, x.retry_after);
    if (!SleepUnlessCancelled(wait, cancel)) return Cancelled();
    backoff *= 2;
  }

  json reply = json::parse(x.body, nullptr, false);
  const json* content = nullptr;
  if (reply.is_object() && reply.contains("choices") && reply["choices"].is_array() && !reply["choices"].empty()) {
    const json& choice = reply["choices"][0];
    if (choice.is_object() && choice.contains("message") && choice["message"].is_object() &&
        choice["message"].contains("content") && choice["message"]["content"].is_string()) {
      content = &choice["message"]["content"];
    }
  }
  if (content == nullptr) {
    return WithEvidence(Unavailable("the chat endpoint's reply is not a chat completion (no choices[0].message.content string)"),
                        e, url, x, attempt);
  }
  ChatReply out;
  out.content = content->get<std::string>();
  out.model = reply.contains("model") && reply["model"].is_string() ? reply["model"].get<std::string>() : e.model;
  out.attempts = attempt;
  out.http_status = x.status;
  return out;
}

}  // namespace parity::inject
