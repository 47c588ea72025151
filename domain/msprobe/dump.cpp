#include "domain/msprobe/dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include <simdjson.h>

#include "domain/msprobe/dump_builder.h"
#include "domain/msprobe/pyrepr.h"

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

// Reads up to `max` bytes into `dst`; 0 at the end. Throws std::runtime_error on a read error.
using ByteSource = std::function<size_t(char* dst, size_t max)>;

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

// Reads the dump in windows that end where an entry of "data" ends, so only one window and
// simdjson's index for it are in memory next to the rows. nullopt: the text is not laid out
// one entry per line (or a window did not parse): the caller parses it whole instead.
}  // namespace

struct DumpReader::Buffers {
  static constexpr size_t kPrefix = 16;  // room for the '{' or "{\"data\":{" a window is parsed with
  size_t capacity = 0;
  std::unique_ptr<char[]> buffer;
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

std::optional<Dump> ParseWindows(const ByteSource& read, const std::filesystem::path& origin,
                                 const ReadOptions& options, DumpReader::Buffers& buffers) {
  constexpr size_t kPrefix = DumpReader::Buffers::kPrefix;
  if (buffers.capacity < std::max<size_t>(options.window_bytes, 256)) {
    buffers.capacity = std::max<size_t>(options.window_bytes, 256);
    buffers.buffer.reset(new char[kPrefix + buffers.capacity + simdjson::SIMDJSON_PADDING]);
  }
  size_t& capacity = buffers.capacity;
  std::unique_ptr<char[]>& buffer = buffers.buffer;
  char* text = buffer.get() + kPrefix;
  size_t length = 0;
  bool eof = false;
  uint64_t total = 0;
  auto fill = [&] {
    while (!eof && length < capacity) {
      size_t n = read(text + length, capacity - length);
      if (n == 0) eof = true;
      length += n;
      total += n;
    }
  };
  auto grow = [&] {
    capacity *= 2;
    std::unique_ptr<char[]> bigger(new char[kPrefix + capacity + simdjson::SIMDJSON_PADDING]);
    std::memcpy(bigger.get() + kPrefix, text, length);
    buffer = std::move(bigger);
    text = buffer.get() + kPrefix;
  };
  fill();
  auto head = ScanHead(std::string_view(text, length));
  if (!head) return std::nullopt;

  Dump dump;
  dump.path = origin;
  if (options.pool) dump.pool = options.pool;
  internal::DumpBuilder builder(dump);
  od::parser& parser = buffers.parser;
  try {
    // The top-level members before "data" (task, level, framework), with "data" emptied.
    std::string head_text(text, head->data_open + 1);
    head_text += "}}";
    simdjson::padded_string head_json(head_text);
    od::document head_doc = parser.iterate(head_json);
    builder.ParseTop(head_doc);

    // An entry ends where its closing brace sits at the keys' indentation, followed by the
    // next key: "\n  },\n  \"". JSON strings hold no raw line breaks, so this text occurs
    // only between two entries of a dump written with an indent.
    const std::string boundary = head->indent + "}," + head->indent + "\"";
    size_t start = head->first_key;  // the first key of the window
    while (true) {
      if (!eof) {
        std::string_view window(text + start, length - start);
        size_t at = window.rfind(boundary);
        if (at == std::string_view::npos) {  // one entry larger than the window
          if (start > 1) {
            std::memmove(text + 1, text + start, length - start);
            length -= start - 1;
            start = 1;
          } else {
            grow();
          }
          fill();
          continue;
        }
        size_t comma = start + at + head->indent.size() + 1;
        text[start - 1] = '{';
        text[comma] = '}';
        size_t doc_length = comma - start + 2;
        if (auto entries = ParseDom(buffers.dom, text + start - 1, doc_length)) {
          builder.ParseEntries(*entries);
          ++dump.dom_windows;
        } else {
          od::document doc = parser.iterate(text + start - 1, doc_length, doc_length + simdjson::SIMDJSON_PADDING);
          builder.ParseEntries(doc.get_object());
        }
        ++dump.windows;
        // Keep the rest (from the next key's line break) at the front, after one free byte.
        std::memmove(text + 1, text + comma + 1, length - comma - 1);
        length = length - comma - 1 + 1;
        start = 1;
        fill();
        continue;
      }
      // The last window: the remaining entries, the end of "data" and any members after it.
      static constexpr std::string_view kOpen = "{\"data\":{";
      char* doc_start = text + start - kOpen.size();
      std::memcpy(doc_start, kOpen.data(), kOpen.size());
      size_t doc_length = length - start + kOpen.size();
      od::document doc = parser.iterate(doc_start, doc_length, doc_length + simdjson::SIMDJSON_PADDING);
      builder.ParseTop(doc);
      ++dump.windows;
      break;
    }
  } catch (const std::exception&) {
    return std::nullopt;  // parsed whole, which reports the error
  }
  dump.bytes = total;
  auto finished = Finish(std::move(dump), builder.md5_leaves());
  if (!finished.ok()) return std::nullopt;
  return std::move(finished).value();
}

}  // namespace

Result<Dump> DumpReader::Parse(std::string_view json_text, const std::filesystem::path& origin) {
  size_t offset = 0;
  ByteSource read = [&](char* dst, size_t max) {
    size_t n = std::min(max, json_text.size() - offset);
    std::memcpy(dst, json_text.data() + offset, n);
    offset += n;
    return n;
  };
  if (auto dump = ParseWindows(read, origin, options_, *buffers_)) return std::move(*dump);
  simdjson::padded_string text(json_text);
  return ParseWhole(text, origin, options_);
}

Result<Dump> DumpReader::Read(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound(path.string() + ": no such dump.json");
    return Unavailable(path.string() + ": cannot open: " + std::strerror(err));
  }
  std::string read_error;
  ByteSource read = [&](char* dst, size_t max) -> size_t {
    while (true) {
      ssize_t n = ::read(fd, dst, max);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      read_error = std::strerror(errno);
      return 0;
    }
  };
  std::optional<Dump> dump = ParseWindows(read, path, options_, *buffers_);
  ::close(fd);
  if (!read_error.empty()) return Unavailable(path.string() + ": cannot read: " + read_error);
  if (dump) return std::move(*dump);
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
