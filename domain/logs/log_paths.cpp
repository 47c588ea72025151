#include "domain/logs/log_parser.h"

#include <fnmatch.h>

#include <algorithm>

namespace parity::logs {

Result<std::vector<std::filesystem::path>> ExpandLogPaths(const std::vector<std::string>& patterns) {
  std::vector<std::filesystem::path> out;
  for (const auto& pattern : patterns) {
    const std::filesystem::path p(pattern);
    const std::string name = p.filename().string();
    if (name.find_first_of("*?[") == std::string::npos) {
      out.push_back(p);
      continue;
    }
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
    std::vector<std::filesystem::path> matches;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (::fnmatch(name.c_str(), it->path().filename().c_str(), 0) == 0) matches.push_back(it->path());
    }
    if (ec) return NotFound("cannot list " + dir.string() + " for pattern " + pattern + ": " + ec.message());
    if (matches.empty()) return NotFound("no file matches " + pattern);
    std::sort(matches.begin(), matches.end());
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

}  // namespace parity::logs
