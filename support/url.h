// The two questions parity asks of a URL before it sends anything in clear text.
#pragma once

#include <string>
#include <string_view>

namespace parity {

// The host of "scheme://user@host:port/path" ("[::1]" keeps its brackets); "" when none.
std::string UrlHost(std::string_view url);

// The port of such a URL; when none is written, the scheme's default (smtp 25, smtps
// 465, http 80, https 443, ssh 22), else 0.
int UrlPort(std::string_view url);

// localhost, 127.0.0.0/8 or [::1]: the only hosts parity talks to without TLS.
bool IsLoopbackHost(std::string_view host);

}  // namespace parity
