#include "mcp-server/signed_state.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace parity::mcp {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Hmac(const std::string& key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buf >> bits) & 0x3F]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buf << (6 - bits)) & 0x3F]);
  return out;
}

Result<std::string> Base64UrlDecode(std::string_view in) {
  std::string out;
  uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = c ? std::strchr(kAlphabet, c) : nullptr;
    if (!p) return InvalidArgument("not base64url text");
    buf = (buf << 6) | static_cast<uint32_t>(p - kAlphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xFF));
    }
  }
  return out;
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(hex[md[i] >> 4]);
    out.push_back(hex[md[i] & 15]);
  }
  return out;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(out.data() + got, n - got, 0);
    if (r > 0) got += static_cast<size_t>(r);
    else if (errno != EINTR) std::abort();  // no entropy source: refusing beats a guessable key
  }
  return out;
}

std::string RandomHex(size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : RandomBytes(n)) {
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 15]);
  }
  return out;
}

StateSigner::StateSigner() : key_(RandomBytes(32)) {}

static std::string Digest(const StateBinding& b) {
  return Sha256Hex(b.method + '\n' + b.target + '\n' + b.arguments.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string StateSigner::Sign(const StateBinding& binding, const json& answers, std::chrono::seconds ttl) const {
  json payload = {{"v", 1}, {"d", Digest(binding)}, {"e", NowSeconds() + ttl.count()}, {"a", answers}};
  std::string text = payload.dump(-1, ' ', false, json::error_handler_t::replace);
  return Base64UrlEncode(text) + "." + Base64UrlEncode(Hmac(key_, text));
}

Result<json> StateSigner::Verify(const StateBinding& binding, const std::string& token) const {
  auto bad = [](const std::string& why) {
    return InvalidArgument("requestState integrity check failed: " + why)
        .WithHint("start the request again without requestState / confirmations");
  };
  size_t dot = token.find('.');
  if (dot == std::string::npos) return bad("malformed token");
  auto payload = Base64UrlDecode(std::string_view(token).substr(0, dot));
  auto mac = Base64UrlDecode(std::string_view(token).substr(dot + 1));
  if (!payload.ok() || !mac.ok()) return bad("malformed token");
  std::string expected = Hmac(key_, *payload);
  if (mac->size() != expected.size() || CRYPTO_memcmp(mac->data(), expected.data(), expected.size()) != 0) {
    return bad("signature mismatch (altered, or issued by another server process)");
  }
  json p = json::parse(*payload, nullptr, false);
  if (!p.is_object() || !p.contains("d") || !p.contains("e") || !p.contains("a")) return bad("malformed payload");
  if (p["d"] != Digest(binding)) return bad("issued for a different request (method, name or arguments changed)");
  if (!p["e"].is_number_integer() || p["e"].get<int64_t>() < NowSeconds()) return bad("expired");
  return p["a"];
}

}  // namespace parity::mcp
