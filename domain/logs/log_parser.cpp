#include "domain/logs/log_parser.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

#include "support/guarded_mapping.h"
#include "domain/logs/compressed_log.h"
#include "domain/logs/text_log_parser.h"
#include "domain/logs/sha256.h"
#include "domain/logs/tfevents.h"
#include "domain/logs/user_regex.h"

namespace parity::logs {

namespace {

constexpr size_t kChunkBytes = 1 << 20;  // blocks small enough to stay in L2 for the scans

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

constexpr ssize_t kReadCancelled = -2;

// Reads a pipe or FIFO (opened O_NONBLOCK) as its writer writes: waits in slices of 100 ms
// so that cancellation is seen, and ends (0) when the writer has closed it. A FIFO nobody
// has opened for writing yet reads as "no data", not as its end (Linux reports POLLHUP only
// once a writer came and went).
ssize_t ReadStream(int fd, char* buffer, size_t size, const CancellationToken& cancel) {
  while (true) {
    if (cancel.cancelled()) return kReadCancelled;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready < 0 && errno != EINTR) return -1;
    if (ready <= 0) continue;
    const ssize_t got = ::read(fd, buffer, size);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got == 0 && !(p.revents & POLLHUP)) continue;
    return got;
  }
}

// Whether the first bytes look like a TFRecord (a TensorBoard event file) rather than text.
bool LooksLikeTfRecord(const char* data, size_t n) {
  return n >= 12 && TfRecordHeaderValid(reinterpret_cast<const unsigned char*>(data));
}

// A text log has (almost) no control bytes other than tab, CR, LF and ESC.
bool LooksBinary(const char* data, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b && c != '\f' && c != '\b') ++bad;
  }
  return n > 0 && bad * 10 > n;  // more than 10% control bytes
}

}  // namespace

Result<ParseResult> ParseLog(const std::filesystem::path& path, const ParseOptions& options) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return NotFound("log file not found: " + path.string())
        .WithHint("check the path; run_training writes <report_dir>/<side>_<config>_train.log");
  }
  if (options.format == LogFormat::kTensorBoard ||
      (options.format == LogFormat::kAuto &&
       (std::filesystem::is_directory(status) ||
        path.filename().string().find("tfevents") != std::string::npos))) {
    return ParseTensorBoard(path, options);
  }
  if (std::filesystem::is_directory(status)) {
    return InvalidArgument(path.string() + " is a directory, not a log file")
        .WithHint("pass the log file itself, or format=tensorboard for a directory of event files");
  }

  std::optional<UserRegex> regex;
  if (!options.regex.empty()) {
    PARITY_ASSIGN_OR_RETURN(UserRegex r, UserRegex::Compile(options.regex));
    regex = std::move(r);
  }

  // O_NONBLOCK: opening a FIFO that has no writer must not block (nor must reading it:
  // see ReadStream); it changes nothing for a regular file.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return Unavailable("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  ::fstat(fd.get(), &st);
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return InvalidArgument(path.string() + " is not a regular file or a pipe (a device or a socket): not read")
        .WithHint("pass the log file itself, or a copy of what the device holds");
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  ParseResult result;
  result.path = std::filesystem::absolute(path).lexically_normal().string();

  std::optional<Sha256> digest;
  if (options.sha256) digest.emplace();

  // A regular file is read through a guarded mapping (no copy into a buffer); what it grew
  // by since, and pipes and other files, through read(). Both hand the parser the same
  // blocks: at most kChunkBytes, cut after their last line end.
  // A gzip or xz log (recognised by its magic bytes) is decompressed as it is read; the
  // digest is then of the file as stored.
  std::unique_ptr<Decompressor> decompressor;
  Compression compression = Compression::kNone;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    unsigned char magic[6] = {};
    const ssize_t got = ::pread(fd.get(), magic, sizeof magic, 0);
    compression = DetectCompression(magic, got > 0 ? static_cast<size_t>(got) : 0);
    if (compression != Compression::kNone) {
      std::function<void(std::string_view)> on_raw;
      if (digest) on_raw = [&digest](std::string_view bytes) { digest->Update(bytes); };
      PARITY_ASSIGN_OR_RETURN(decompressor, OpenDecompressor(fd.get(), compression, path.string(), std::move(on_raw)));
    }
  }
  std::unique_ptr<GuardedMapping> mapping;
  if (S_ISREG(st.st_mode) && st.st_size > 0 && !decompressor) {
    auto mapped = GuardedMapping::Map(fd.get(), static_cast<size_t>(st.st_size));
    // Not mapped (no slot left, no address space): read() gives the same result, slower.
    if (mapped.ok()) mapping = std::move(*mapped);
  }
  const auto shrank_error = [&]() {
    struct stat now {};
    ::fstat(fd.get(), &now);
    return FailedPrecondition("the log shrank while it was read: " + path.string() + " was " +
                              std::to_string(st.st_size) + " bytes when opened and is " +
                              std::to_string(now.st_size) + " bytes now (rotated or rewritten)")
        .WithHint("parse it again once the writer is done, or parse a copy");
  };

  std::unique_ptr<char[]> buffer(new char[kChunkBytes]);
  size_t carry = 0;
  uint64_t total = 0;
  size_t mapped_at = 0;  // bytes of the mapping handed to the loop
  bool first_block = true;
  std::unique_ptr<TextLogParser> parser;
  while (true) {
    if (options.cancel.cancelled()) return Cancelled("parse_log cancelled while reading " + path.string());
    const char* data = buffer.get();
    ssize_t n = 0;
    if (mapping) {
      data = mapping->data() + mapped_at - carry;
      n = static_cast<ssize_t>(std::min(kChunkBytes - carry, mapping->size() - mapped_at));
      if (n == 0) {
        if (mapping->shrank()) return shrank_error();
        std::memcpy(buffer.get(), data, carry);
        mapping.reset();
        if (::lseek(fd.get(), static_cast<off_t>(mapped_at), SEEK_SET) < 0) {
          return Unavailable("seeking " + path.string() + " to byte " + std::to_string(mapped_at) +
                             " failed: " + std::strerror(errno));
        }
        continue;
      }
      // The bytes before this block are done with: let them leave RSS, 32 MiB at a time.
      mapping->Release((mapped_at - carry) & ~((size_t{32} << 20) - 1));
      mapped_at += static_cast<size_t>(n);
    } else {
      if (decompressor) {
        PARITY_ASSIGN_OR_RETURN(size_t got, decompressor->Read(buffer.get() + carry, kChunkBytes - carry));
        n = static_cast<ssize_t>(got);
      } else {
        n = S_ISFIFO(st.st_mode) ? ReadStream(fd.get(), buffer.get() + carry, kChunkBytes - carry, options.cancel)
                                 : ::read(fd.get(), buffer.get() + carry, kChunkBytes - carry);
      }
      if (n == kReadCancelled) return Cancelled("parse_log cancelled while waiting for " + path.string() + " to be written");
      if (n < 0) {
        if (errno == EINTR) continue;
        return Unavailable("reading " + path.string() + " failed at byte " + std::to_string(total) +
                           ": " + std::strerror(errno));
      }
    }
    if (digest && n > 0 && !decompressor) digest->Update(std::string_view(data + carry, static_cast<size_t>(n)));
    total += static_cast<uint64_t>(n);
    const size_t have = carry + static_cast<size_t>(n);
    if (first_block) {
      first_block = false;
      if (have == 0) {
        return FailedPrecondition("log file is empty: " + path.string())
            .WithHint("the run may not have started yet, or its output went to another file");
      }
      if (options.format == LogFormat::kAuto && LooksLikeTfRecord(data, have)) {
        return ParseTensorBoard(path, options);
      }
      if (LooksBinary(data, std::min<size_t>(have, 65536))) {
        if (mapping && mapping->shrank()) return shrank_error();
        return InvalidArgument(path.string() + " is not a text training log: over 10% of its first " +
                               std::to_string(std::min<size_t>(have, 65536)) + " bytes are control bytes")
            .WithHint("for TensorBoard event files pass format=tensorboard");
      }
      parser = MakeTextLogParser(options, std::move(regex));
      // A compressed log's text is some ten times its size; reserving is only address space.
      parser->ExpectBytes(static_cast<uint64_t>(st.st_size) * (decompressor ? 10 : 1));
    }
    if (n == 0) {
      if (carry > 0) parser->FeedUnterminatedLast(data, data + carry);
      break;
    }
    const void* last_nl = memrchr(data, '\n', have);
    size_t upto;
    if (last_nl) {
      upto = static_cast<const char*>(last_nl) - data + 1;
    } else if (have == kChunkBytes) {
      parser->NoteLongLine(kChunkBytes);
      upto = have;
    } else {
      carry = have;
      continue;
    }
    parser->Feed(data, data + upto);
    if (mapping && mapping->shrank()) return shrank_error();
    carry = have - upto;
    if (carry > 0 && !mapping) std::memmove(buffer.get(), buffer.get() + upto, carry);
    if (options.progress) {
      options.progress(decompressor ? decompressor->raw_bytes() : total, static_cast<uint64_t>(st.st_size));
    }
  }
  result.bytes = total;
  if (digest) result.sha256 = digest->HexDigest();
  ParseResult parsed = parser->Finish(std::move(result));
  if (decompressor) {
    parsed.format_detail += std::string(parsed.format_detail.empty() ? "" : "; ") + "read from a " +
                            CompressionName(compression) + "-compressed file (" + std::to_string(st.st_size) +
                            " bytes, " + std::to_string(total) + " bytes of text)";
  }
  return parsed;
}


}  // namespace parity::logs
