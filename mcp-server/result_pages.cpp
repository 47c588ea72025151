#include "mcp-server/result_pages.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>

#include "mcp-server/invoke.h"
#include "support/safe_file.h"

namespace parity::mcp {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFolder = "results";

bool Continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// Only names SpillResult makes: [A-Za-z0-9_-]+ then ".json".
bool SpilledName(const std::string& file) {
  constexpr std::string_view ext = ".json";
  if (file.size() <= ext.size() || file.size() > 200 || file.compare(file.size() - ext.size(), ext.size(), ext) != 0) {
    return false;
  }
  return std::all_of(file.begin(), file.end() - static_cast<std::ptrdiff_t>(ext.size()), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-';
  });
}

std::string SafeToolName(std::string_view tool) {
  std::string out;
  for (unsigned char c : tool) out += std::isalnum(c) || c == '_' || c == '-' ? static_cast<char>(c) : '_';
  return out.empty() ? "tool" : out.substr(0, 64);
}

// The first offset at or after `at` that begins a UTF-8 sequence, within the `n` bytes of
// `data` (which start at file offset `base`).
size_t SequenceStart(const char* data, size_t n, size_t base, size_t at) {
  while (at - base < n && Continuation(static_cast<unsigned char>(data[at - base]))) ++at;
  return at;
}

}  // namespace

Result<SpilledResult> SpillResult(const fs::path& report_dir, const policy::Policy& policy, std::string_view tool,
                                  const std::string& text) {
  if (report_dir.empty()) return FailedPrecondition("the server has no report directory");
  const fs::path root = fs::absolute(report_dir);
  const policy::Decision allowed = policy.CheckPath(root / std::string(kFolder), policy::Access::kWrite);
  if (!allowed.allowed()) {
    return FailedPrecondition("the user's policy does not let the server write " + (root / std::string(kFolder)).string());
  }
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  char hash[20];
  std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(text));
  SpilledResult out;
  out.file = SafeToolName(tool) + "-" + stamp + "-" + hash + ".json";
  out.path = root / std::string(kFolder) / out.file;
  out.bytes = text.size();
  out.pages = (text.size() + kResultPageBytes - 1) / kResultPageBytes;
  WriteOptions options;
  options.mode = kRecordMode;  // a result may quote what the user's files hold
  PARITY_RETURN_IF_ERROR(WriteFileUnder(root, fs::path(std::string(kFolder)) / out.file, text, options));
  return out;
}

std::string ResultPageUri(const std::string& file, size_t page) {
  return "parity://report/results/" + file + "/" + std::to_string(page);
}

Result<std::string> ReadResultPage(const fs::path& report_dir, const std::string& file, size_t page) {
  if (!SpilledName(file)) return NotFound("not a result file of this server: " + file);
  PARITY_ASSIGN_OR_RETURN(UniqueFd fd, OpenUnder(fs::absolute(report_dir), fs::path(std::string(kFolder)) / file, O_RDONLY));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return NotFound("not a result file of this server: " + file);
  const size_t size = static_cast<size_t>(st.st_size);
  const size_t pages = (size + kResultPageBytes - 1) / kResultPageBytes;
  if (page >= pages) {
    return NotFound(file + " has " + std::to_string(pages) + " pages (0 to " + std::to_string(pages ? pages - 1 : 0) +
                    "); there is no page " + std::to_string(page));
  }
  // The page's bytes and the 3 after it: enough to move both cuts past a sequence's tail.
  const size_t base = page * kResultPageBytes;
  const size_t want = std::min(size - base, kResultPageBytes + 3);
  std::string buf(want, '\0');
  size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd.get(), buf.data() + got, want - got, static_cast<off_t>(base + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("cannot read " + file + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  buf.resize(got);
  const size_t begin = page == 0 ? 0 : SequenceStart(buf.data(), buf.size(), base, base);
  const size_t end = std::min(size, SequenceStart(buf.data(), buf.size(), base, base + kResultPageBytes));
  if (begin >= end) return std::string();
  return buf.substr(begin - base, end - begin);
}

ResourceTemplate MakeResultPagesTemplate() {
  ResourceTemplate t;
  t.uri_template = "parity://report/results/{file}/{page}";
  t.name = "tool_result_pages";
  t.title = "A tool result too large to send inline (JSON pages)";
  t.description = "The whole JSON of a tool result over the " + std::to_string(kMaxToolResultBytes / 1024) +
                  " KiB cap on any result, as the call's error named it: " + std::to_string(kResultPageBytes / 1024) +
                  " KiB of its text a page, page numbers from 0; the pages put end to end are the file.";
  t.mime_type = "application/json";
  t.read = [](const std::string& uri, const std::map<std::string, std::string>& vars,
              ToolContext& ctx) -> Result<json> {
    const std::string file = vars.count("file") ? vars.at("file") : "";
    const std::string page_text = vars.count("page") ? vars.at("page") : "";
    size_t page = 0;
    const auto [end, ec] = std::from_chars(page_text.data(), page_text.data() + page_text.size(), page);
    if (ec != std::errc() || end != page_text.data() + page_text.size()) {
      return InvalidArgument("page must be a number from 0: " + page_text);
    }
    PARITY_ASSIGN_OR_RETURN(std::string text, ReadResultPage(ctx.report_dir(), file, page));
    return json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", std::move(text)}}});
  };
  return t;
}

}  // namespace parity::mcp
