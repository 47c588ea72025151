#include "domain/msprobe/dump.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include <simdjson.h>

#include "domain/msprobe/dump_builder.h"
#include "domain/msprobe/pyrepr.h"
#include "support/guarded_mapping.h"

namespace parity::msprobe {

namespace od = simdjson::ondemand;

const char* DumpModeName(DumpMode mode) {
  switch (mode) {
    case DumpMode::kSummary: return "summary";
    case DumpMode::kMd5: return "md5";
    case DumpMode::kAll: return "all";
  }
  return "?";
}

const char* RowStateName(RowState state) {
  switch (state) {
    case RowState::kInput: return "input";
    case RowState::kParameters: return "parameters";
    case RowState::kOutput: return "output";
    case RowState::kParametersGrad: return "parameters_grad";
  }
  return "?";
}

TextPool::TextPool() {
  texts_.emplace_back();
  index_.emplace(texts_.back(), 0);
}

uint32_t TextPool::Intern(std::string_view text) {
  auto it = index_.find(text);
  if (it != index_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.emplace_back(text);
  index_.emplace(texts_.back(), id);
  return id;
}

std::string Dump::StatString(const StatValue& value) const {
  switch (value.kind) {
    case StatValue::Kind::kNone: return "None";
    case StatValue::Kind::kText: return Text(value.text);
    case StatValue::Kind::kNumber:
      if (value.integral && std::abs(value.number) < 9.007199254740992e15) {
        return std::to_string(static_cast<long long>(value.number));
      }
      return PyFloatRepr(value.number);
  }
  return "None";
}

std::string Dump::Md5String(const Row& row) const {
  if (row.md5_text != 0) return Text(row.md5_text);
  if (!row.has_md5) return "N/A";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", row.md5);
  return buf;
}

std::string Dump::RequiresGradString(const Row& row) const {
  return row.requires_grad == 2 ? "N/A" : (row.requires_grad ? "True" : "False");
}

namespace {

// Where the "data" object's entries begin in a pretty-printed dump.json, and the line break
// plus indentation that precedes each of its keys ("\n  " for msprobe's indent=1).
struct Head {
  size_t data_open = 0;  // the '{' of "data"
  size_t first_key = 0;  // the '"' of its first key
  std::string indent;
};

// Scans the top-level object up to "data": { and its first key, tracking strings and depth.
// nullopt when the text does not have that shape within `text` (then it is parsed whole).
std::optional<Head> ScanHead(std::string_view text) {
  int depth = 0;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
  };
  while (i < text.size()) {
    char c = text[i];
    if (c == '"') {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (i >= text.size()) return std::nullopt;
      std::string_view str = text.substr(start, i - start);
      ++i;
      if (depth != 1 || str != "data") continue;
      skip_space();
      if (i >= text.size() || text[i] != ':') continue;
      ++i;
      skip_space();
      if (i >= text.size() || text[i] != '{') continue;
      Head head;
      head.data_open = i++;
      size_t indent_start = i;
      skip_space();
      if (i >= text.size() || text[i] != '"') return std::nullopt;  // empty data, or cut short
      head.first_key = i;
      head.indent = std::string(text.substr(indent_start, i - indent_start));
      if (head.indent.find('\n') == std::string::npos) return std::nullopt;  // not one key per line
      return head;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return std::nullopt;
}

Result<Dump> Finish(Dump dump, uint64_t md5_leaves) {
  dump.has_md5 = md5_leaves > 0;
  const std::string origin = dump.path.string();
  if (dump.task == "tensor") dump.mode = DumpMode::kAll;
  else if (dump.task == "statistics") dump.mode = dump.has_md5 ? DumpMode::kMd5 : DumpMode::kSummary;
  else if (dump.task.empty()) return InvalidArgument(origin + ": dump.json has no \"task\"");
  else {
    return InvalidArgument(origin + ": dump task \"" + dump.task +
                           "\" cannot be compared (msprobe compares only \"statistics\" and \"tensor\" dumps)");
  }
  return dump;
}

Status ParseError(const std::filesystem::path& origin, const std::exception& e, bool simdjson_error) {
  Status status = InvalidArgument(origin.string() + ": not a valid msprobe dump.json: " + e.what());
  if (simdjson_error) {
    status.WithHint("the file must be the dump.json msprobe wrote (an object with \"task\", \"level\" and \"data\")");
  }
  return status;
}

// The whole text at once: dumps without one entry per line, and the authority on errors.
Result<Dump> ParseWhole(const simdjson::padded_string& text, const std::filesystem::path& origin,
                        const ReadOptions& options) {
  Dump dump;
  dump.path = origin;
  dump.bytes = text.size();
  dump.windows = 1;
  if (options.pool) dump.pool = options.pool;
  internal::DumpBuilder builder(dump);
  try {
    od::parser parser;
    od::document doc = parser.iterate(text);
    builder.ParseTop(doc);
  } catch (const simdjson::simdjson_error& e) {
    return ParseError(origin, e, true);
  } catch (const std::exception& e) {
    return ParseError(origin, e, false);
  }
  return Finish(std::move(dump), builder.md5_leaves());
}

}  // namespace

struct DumpReader::Buffers {
  size_t capacity = 0;
  std::unique_ptr<char[]> buffer;  // the last window, when the file's end is not padded
  od::parser parser;
  simdjson::dom::parser dom;  // the windows' fast path; On Demand takes what it rejects
};

DumpReader::DumpReader(ReadOptions options) : options_(std::move(options)), buffers_(std::make_unique<Buffers>()) {}
DumpReader::~DumpReader() = default;

namespace {

// The window's object from simdjson's DOM, or nullopt when DOM rejects it (Python's NaN /
// Infinity, integers beyond 64 bits, an error: the On Demand walk then reads or reports it).
// `text` has SIMDJSON_PADDING readable bytes after `length`.
std::optional<simdjson::dom::object> ParseDom(simdjson::dom::parser& parser, const char* text, size_t length) {
  if (length > parser.capacity() && parser.allocate(length) != simdjson::SUCCESS) return std::nullopt;
  simdjson::dom::object object;
  if (parser.parse(text, length, /*realloc_if_needed=*/false).get(object) != simdjson::SUCCESS) return std::nullopt;
  return object;
}

// A whole dump.json in writable memory (a private mapping of the file, or a copy): each
// window is parsed in place, its first and last bytes overwritten with braces. Bytes after
// `length` are readable only when `padded_end`.
struct Text {
  char* data = nullptr;
  size_t length = 0;
  bool padded_end = false;
  // Called with [from, to) once a window is parsed: its pages are not needed again.
  std::function<void(size_t from, size_t to)> done;
  // Called before a window is parsed; false: the text cannot be read (the file shrank).
  std::function<bool(size_t from, size_t to)> load;
};

// Reads the dump in windows that end where an entry of "data" ends, so only one window and
// simdjson's index for it are in memory next to the rows. nullopt: the text is not laid out
// one entry per line (or a window did not parse): the caller parses it whole instead.
std::optional<Dump> ParseWindows(const Text& text, const std::filesystem::path& origin, const ReadOptions& options,
                                 DumpReader::Buffers& buffers, std::string& read_error) {
  const size_t window_bytes = std::max<size_t>(options.window_bytes, 256);
  char* const data = text.data;
  const size_t length = text.length;
  auto load = [&](size_t from, size_t to) {
    if (!text.load || text.load(from, to)) return true;
    read_error = "the file changed (shrank) while it was read";
    return false;
  };
  if (!load(0, std::min(length, window_bytes))) return std::nullopt;
  auto head = ScanHead(std::string_view(data, std::min(length, window_bytes)));
  static constexpr std::string_view kOpen = "{\"data\":{";
  if (!head || head->first_key < kOpen.size()) return std::nullopt;

  Dump dump;
  dump.path = origin;
  dump.bytes = length;
  if (options.pool) dump.pool = options.pool;
  internal::DumpBuilder builder(dump);
  od::parser& parser = buffers.parser;
  try {
    // The top-level members before "data" (task, level, framework), with "data" emptied.
    std::string head_text(data, head->data_open + 1);
    head_text += "}}";
    simdjson::padded_string head_json(head_text);
    od::document head_doc = parser.iterate(head_json);
    builder.ParseTop(head_doc);

    // An entry ends where its closing brace sits at the keys' indentation, followed by the
    // next key: "\n  },\n  \"". JSON strings hold no raw line breaks, so this text occurs
    // only between two entries of a dump written with an indent.
    const std::string boundary = head->indent + "}," + head->indent + "\"";
    size_t start = head->first_key;  // where the window's first key (or the space before it) is
    while (length - start > window_bytes) {
      size_t span = window_bytes;
      size_t at = std::string_view::npos;
      while (true) {  // an entry larger than the window widens it
        if (!load(start, start + span)) return std::nullopt;
        at = std::string_view(data + start, span).rfind(boundary);
        if (at != std::string_view::npos || start + span == length) break;
        span = std::min(length - start, span * 2);
      }
      if (at == std::string_view::npos) break;  // the rest is one entry: the last window
      size_t comma = start + at + head->indent.size() + 1;
      if (comma + 1 + simdjson::SIMDJSON_PADDING > length) break;  // too close to the end for simdjson's padding
      data[start - 1] = '{';
      data[comma] = '}';
      const char* doc = data + start - 1;
      size_t doc_length = comma - start + 2;
      if (auto entries = ParseDom(buffers.dom, doc, doc_length)) {
        builder.ParseEntries(*entries);
        ++dump.dom_windows;
      } else {
        od::document od_doc = parser.iterate(doc, doc_length, doc_length + simdjson::SIMDJSON_PADDING);
        builder.ParseEntries(od_doc.get_object());
      }
      ++dump.windows;
      if (text.done) text.done(start - 1, comma);
      start = comma + 1;  // the next key's line break
    }
    // The last window: the remaining entries, the end of "data" and any members after it.
    if (!load(start, length)) return std::nullopt;
    size_t doc_length = length - start + kOpen.size();
    char* doc_start = data + start - kOpen.size();
    if (!text.padded_end) {
      if (buffers.capacity < doc_length) {
        buffers.capacity = doc_length;
        buffers.buffer.reset(new char[doc_length + simdjson::SIMDJSON_PADDING]);
      }
      doc_start = buffers.buffer.get();
      std::memcpy(doc_start + kOpen.size(), data + start, length - start);
    }
    std::memcpy(doc_start, kOpen.data(), kOpen.size());
    od::document doc = parser.iterate(doc_start, doc_length, doc_length + simdjson::SIMDJSON_PADDING);
    builder.ParseTop(doc);
    ++dump.windows;
  } catch (const std::exception&) {
    return std::nullopt;  // parsed whole, which reports the error
  }
  auto finished = Finish(std::move(dump), builder.md5_leaves());
  if (!finished.ok()) return std::nullopt;
  return std::move(finished).value();
}

// A private, writable mapping of a regular file (writes stay in this process's copy),
// guarded: a file truncated while it is parsed reads as zeros past its new end and
// shrank() says so, instead of a SIGBUS ending the process.
class Mapping {
 public:
  // nullopt error text: mapped; otherwise why not.
  std::optional<std::string> Map(int fd, size_t size) {
    if (size == 0) return "empty file";
    auto mapped = GuardedMapping::Map(fd, size, GuardedMapping::Access::kPrivateWritable);
    if (!mapped.ok()) return mapped.status().message();
    guarded_ = std::move(mapped).value();
    data_ = guarded_->writable_data();
    size_ = size;
    return std::nullopt;
  }
  bool shrank() const { return guarded_ && guarded_->shrank(); }
  char* data() const { return data_; }
  // Bytes past the end of the file up to the end of its last page read as zeros.
  bool PaddedEnd() const {
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t tail = size_ % page;
    return tail != 0 && page - tail >= simdjson::SIMDJSON_PADDING;
  }
  // Maps the pages of [from, to) at once (fewer faults than touching them one by one); false
  // when they are past the file's end now (it shrank). A truncation after this call is
  // caught by the guard (shrank()).
  bool Load(size_t from, size_t to) const {
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t first = from / page * page;
    if (to <= first) return true;
#ifdef MADV_POPULATE_READ
    if (::madvise(data_ + first, to - first, MADV_POPULATE_READ) != 0) return errno != EFAULT;
#endif
    return true;
  }
  // Drops the pages read so far (up to `to`) from this process (they are read again from the
  // page cache if touched): the memory in use stays one window, not the file. Windows are
  // consumed in order, so `from` is where the previous call stopped.
  void Done(size_t /*from*/, size_t to) const { guarded_->Release(to); }


 private:
  std::unique_ptr<GuardedMapping> guarded_;
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

Result<Dump> DumpReader::Parse(std::string_view json_text, const std::filesystem::path& origin) {
  simdjson::padded_string text(json_text);
  std::string read_error;
  if (auto dump = ParseWindows(Text{text.data(), text.size(), true, {}, {}}, origin, options_, *buffers_, read_error)) {
    return std::move(*dump);
  }
  simdjson::padded_string whole(json_text);  // the windows wrote braces into `text`
  return ParseWhole(whole, origin, options_);
}

Result<Dump> DumpReader::Read(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound(path.string() + ": no such dump.json");
    return Unavailable(path.string() + ": cannot open: " + std::strerror(err));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {  // a pipe, a device: read it all, then parse
    std::string text, read_error;
    char block[1 << 16];
    while (true) {
      ssize_t n = ::read(fd, block, sizeof block);
      if (n > 0) text.append(block, static_cast<size_t>(n));
      if (n == 0) break;
      if (n < 0 && errno != EINTR) {
        read_error = std::strerror(errno);
        break;
      }
    }
    ::close(fd);
    if (!read_error.empty()) return Unavailable(path.string() + ": cannot read: " + read_error);
    return Parse(text, path);
  }
  Mapping mapping;
  std::optional<std::string> not_mapped = mapping.Map(fd, static_cast<size_t>(info.st_size));
  ::close(fd);
  if (!not_mapped) {
    Text text{mapping.data(), static_cast<size_t>(info.st_size), mapping.PaddedEnd(),
              [&mapping](size_t from, size_t to) { mapping.Done(from, to); },
              [&mapping](size_t from, size_t to) { return mapping.Load(from, to); }};
    std::string read_error;
    std::optional<Dump> dump = ParseWindows(text, path, options_, *buffers_, read_error);
    if (mapping.shrank()) {
      return FailedPrecondition(path.string() + " shrank while it was read (it was " + std::to_string(info.st_size) +
                                " bytes when opened)")
          .WithHint("read it again once the writer is done, or read a copy");
    }
    if (!read_error.empty()) return Unavailable(path.string() + ": cannot read: " + read_error);
    if (dump) return std::move(*dump);
  }
  // Not mappable (empty) or not laid out one entry per line: read whole.
  auto loaded = simdjson::padded_string::load(path.string());
  if (loaded.error()) {
    return Unavailable(path.string() + ": cannot read: " + simdjson::error_message(loaded.error()));
  }
  return ParseWhole(loaded.value_unsafe(), path, options_);
}

void MoveToPool(Dump& dump, const std::shared_ptr<TextPool>& pool) {
  if (dump.pool == pool) return;
  std::vector<uint32_t> id(dump.pool->size());
  for (uint32_t i = 0; i < id.size(); ++i) id[i] = pool->Intern(dump.pool->Text(i));
  for (size_t r = 0; r < dump.rows.size(); ++r) {
    Row& row = dump.rows[r];
    for (uint32_t* field : {&row.suffix, &row.shape, &row.dtype, &row.data_name, &row.md5_text}) *field = id[*field];
    for (int s = 0; s < 4; ++s) {
      StatValue v = row.stat(s);
      if (v.kind != StatValue::Kind::kText) continue;
      v.text = id[v.text];
      row.set_stat(s, v);
    }
  }
  dump.pool = pool;
}

Result<Dump> ParseDumpJson(std::string_view json_text, const std::filesystem::path& origin,
                           const ReadOptions& options) {
  return DumpReader(options).Parse(json_text, origin);
}

Result<Dump> ReadDumpJson(const std::filesystem::path& path, const ReadOptions& options) {
  return DumpReader(options).Read(path);
}

}  // namespace parity::msprobe
