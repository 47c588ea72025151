#include "support/url.h"

namespace parity {

std::string UrlHost(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  if (!authority.empty() && authority[0] == '[') return std::string(authority.substr(0, authority.find(']') + 1));
  return std::string(authority.substr(0, authority.find(':')));
}

int UrlPort(std::string_view url) {
  size_t scheme_end = url.find("://");
  std::string_view scheme = scheme_end == std::string_view::npos ? std::string_view() : url.substr(0, scheme_end);
  size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string_view authority = url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) authority = authority.substr(at + 1);
  if (size_t bracket = authority.rfind(']'); bracket != std::string_view::npos) authority = authority.substr(bracket + 1);
  if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    int port = 0;
    for (char c : authority.substr(colon + 1)) {
      if (c < '0' || c > '9' || port > 65535) return 0;
      port = port * 10 + (c - '0');
    }
    return port;
  }
  if (scheme == "smtp") return 25;
  if (scheme == "smtps") return 465;
  if (scheme == "http") return 80;
  if (scheme == "https") return 443;
  if (scheme == "ssh") return 22;
  return 0;
}

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "[::1]" || host.substr(0, 4) == "127.";
}

}  // namespace parity
