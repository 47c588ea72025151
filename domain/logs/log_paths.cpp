#include "domain/logs/compressed_log.h"
#include "domain/logs/log_parser.h"
#include "domain/logs/tfevents.h"

#include <glob.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace parity::logs {

namespace fs = std::filesystem;

namespace {

bool HasWildcard(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// A name a training log goes by, compressed or not.
bool LooksLikeLog(const std::string& file_name) {
  const std::string name = WithoutCompressionSuffix(file_name);
  for (std::string_view ext : {".log", ".txt", ".out", ".err", ".jsonl"}) {
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return false;
}

Status AddFolder(const fs::path& dir, const std::string& given, std::vector<fs::path>& out) {
  if (!FindEventFiles(dir).empty()) {  // TensorBoard's layout: ParseLog reads the folder as such
    out.push_back(dir);
    return Status::Ok();
  }
  std::vector<fs::path> logs;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || !it->is_regular_file(ec) || !LooksLikeLog(name)) continue;
    logs.push_back(it->path());
  }
  if (ec) return Unavailable("cannot list the folder " + dir.string() + " (from " + given + "): " + ec.message());
  if (logs.empty()) {
    return NotFound("the folder " + dir.string() + " holds no training log (*.log, *.txt, *.out, *.err, *.jsonl, "
                    "also .gz/.xz/.zst) and no TensorBoard event file")
        .WithHint("pass the log files themselves, or a pattern such as " + (dir / "*.log").string());
  }
  std::sort(logs.begin(), logs.end());
  out.insert(out.end(), logs.begin(), logs.end());
  return Status::Ok();
}

Result<std::vector<fs::path>> Glob(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  std::vector<fs::path> matches;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);  // sorted by glob
  }
  ::globfree(&g);
  if (rc == GLOB_NOMATCH) return NotFound("no file matches " + pattern);
  if (rc == GLOB_ABORTED) return Unavailable("cannot read a folder while expanding " + pattern);
  if (rc != 0) return Internal("glob(" + pattern + ") failed (" + std::to_string(rc) + ")");
  return matches;
}

}  // namespace

Result<std::vector<fs::path>> ExpandLogPaths(const std::vector<std::string>& patterns) {
  std::vector<fs::path> out;
  for (const auto& pattern : patterns) {
    std::vector<fs::path> given;
    if (HasWildcard(pattern)) {
      PARITY_ASSIGN_OR_RETURN(given, Glob(pattern));
    } else {
      given.emplace_back(pattern);
    }
    for (const auto& p : given) {
      std::error_code ec;
      if (fs::is_directory(p, ec)) {
        PARITY_RETURN_IF_ERROR(AddFolder(p, pattern, out));
      } else {
        out.push_back(p);  // missing or not a file: ParseLog names it
      }
      if (out.size() > kMaxLogPaths) {
        return InvalidArgument("the paths expand to more than " + std::to_string(kMaxLogPaths) + " files (at " + pattern +
                               ")")
            .WithHint("narrow the pattern, e.g. to the ranks you compare");
      }
    }
  }
  return out;
}

}  // namespace parity::logs
