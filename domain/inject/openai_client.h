// A minimal client for OpenAI-compatible chat completions (DeepSeek's API and any endpoint
// that speaks it): one POST {base_url}/chat/completions with temperature 0 and a JSON-object
// response format, through libcurl loaded on first use (support/curl_dl.h). Timeouts,
// bounded retries with exponential backoff on timeouts, connection failures, 429 and 5xx
// (never on other 4xx), a cap on the response size, and cancellation through the token.
// The API key travels only in the Authorization header: no error, evidence or log carries it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace parity::inject {

struct ChatEndpoint {
  std::string base_url = "https://api.deepseek.com";
  std::string model = "deepseek-chat";
  std::string api_key;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds timeout{120'000};  // per attempt, the whole exchange
  int max_attempts = 3;
  std::chrono::milliseconds backoff{1'000};    // before the second attempt; doubled after
  size_t max_response_bytes = 4 << 20;
};

struct ChatMessage {
  std::string role;  // "system" | "user"
  std::string content;
};

struct ChatReply {
  std::string content;  // choices[0].message.content
  std::string model;    // as the endpoint reports it
  int attempts = 0;
  long http_status = 0;
};

// Refuses what cannot be sent safely: a URL that is not http(s), or plain http to a host
// other than loopback (the key would cross the network in clear text).
Status ValidateEndpoint(const ChatEndpoint& endpoint);

// The errors carry evidence "url" (without credentials), "http_status", "body_excerpt",
// "attempts" and "curl_error" where known. Kinds: kDeadlineExceeded (timed out),
// kUnavailable (connection, 5xx, 429, unusable reply), kFailedPrecondition (other 4xx:
// the key, the model or the request was refused), kCancelled.
Result<ChatReply> ChatComplete(const ChatEndpoint& endpoint, const std::vector<ChatMessage>& messages,
                               int max_tokens, const CancellationToken& cancel);

// scheme://host[:port]/path without user:password@ and without the query string.
std::string RedactUrl(const std::string& url);

}  // namespace parity::inject
