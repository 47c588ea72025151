// Tamper-proof state handed to the client and back: the 2026-07-28 MRTR requestState and
// the confirmation token of clients that cannot elicit. A token is
// base64url(payload JSON) "." base64url(HMAC-SHA256(key, payload)); the key is random per
// process, so a token is only good for the server that issued it. The payload binds the
// method, the target (tool/prompt/resource name) and a digest of the arguments, carries an
// expiry and the answers collected so far.
#pragma once

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::mcp {

using json = nlohmann::json;

struct StateBinding {
  std::string method;  // "tools/call", "prompts/get", "resources/read"
  std::string target;  // tool / prompt name, resource uri
  json arguments;      // digested, not stored
};

class StateSigner {
 public:
  StateSigner();  // random key
  explicit StateSigner(std::string key) : key_(std::move(key)) {}

  // A token carrying `answers` for this binding, valid for `ttl`.
  std::string Sign(const StateBinding& binding, const json& answers,
                   std::chrono::seconds ttl = std::chrono::hours(1)) const;

  // The answers carried by `token`, or InvalidArgument when it was altered, expired or
  // issued for another request.
  Result<json> Verify(const StateBinding& binding, const std::string& token) const;

 private:
  std::string key_;
};

std::string Base64UrlEncode(std::string_view bytes);
Result<std::string> Base64UrlDecode(std::string_view text);
std::string Sha256Hex(std::string_view bytes);
// `n` bytes from the kernel's CSPRNG (getrandom); aborts if the kernel has none, since a
// guessable key or session id is worse than no server.
std::string RandomBytes(size_t n);
// 2*n lowercase hex characters of RandomBytes(n): session and task ids.
std::string RandomHex(size_t n);

}  // namespace parity::mcp
