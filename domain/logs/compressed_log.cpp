#include "domain/logs/compressed_log.h"

#include <lzma.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace parity::logs {
namespace {

constexpr size_t kRawBlock = 256 << 10;

// What both decoders share: the raw input buffer, refilled from the file.
class RawInput {
 public:
  RawInput(int fd, std::string path, std::function<void(std::string_view)> on_raw)
      : fd_(fd), path_(std::move(path)), on_raw_(std::move(on_raw)), buffer_(kRawBlock) {}

  // Refills when empty; false at the end of the file.
  Result<bool> Fill(const unsigned char** data, size_t* size) {
    while (true) {
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return Unavailable("reading " + path_ + " failed at byte " + std::to_string(total_) + ": " + std::strerror(errno));
      }
      if (on_raw_ && n > 0) on_raw_(std::string_view(reinterpret_cast<const char*>(buffer_.data()), static_cast<size_t>(n)));
      total_ += static_cast<uint64_t>(n);
      *data = buffer_.data();
      *size = static_cast<size_t>(n);
      return n > 0;
    }
  }
  uint64_t total() const { return total_; }
  const std::string& path() const { return path_; }
  // The file ended inside its last member/frame: a log copied or compressed while written.
  Status CutOff(const char* format, const char* unit) const {
    return FailedPrecondition(path_ + " is a " + format + " file cut off after " + std::to_string(total_) +
                              " bytes (its last " + unit + " has no end)")
        .WithHint("the log was copied or compressed while being written; read the uncompressed original");
  }

 private:
  int fd_;
  std::string path_;
  std::function<void(std::string_view)> on_raw_;
  std::vector<unsigned char> buffer_;
  uint64_t total_ = 0;
};

class GzipDecompressor final : public Decompressor {
 public:
  GzipDecompressor(int fd, std::string path, std::function<void(std::string_view)> on_raw)
      : in_(fd, std::move(path), std::move(on_raw)) {}
  ~GzipDecompressor() override {
    if (ready_) inflateEnd(&z_);
  }
  Status Init() {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 16) != Z_OK) return Internal("zlib: inflateInit2 failed");
    ready_ = true;
    return Status::Ok();
  }

  Result<size_t> Read(char* out, size_t size) override {
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(size);
    while (z_.avail_out == size && !done_) {
      if (z_.avail_in == 0) {
        const unsigned char* data = nullptr;
        size_t n = 0;
        PARITY_ASSIGN_OR_RETURN(bool more, in_.Fill(&data, &n));
        if (!more) {
          if (!member_ended_) return in_.CutOff("gzip", "member");
          done_ = true;
          break;
        }
        z_.next_in = const_cast<Bytef*>(data);
        z_.avail_in = static_cast<uInt>(n);
      }
      member_ended_ = false;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
        inflateReset(&z_);  // another member may follow
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return InvalidArgument(in_.path() + " is not valid gzip at compressed byte " +
                        std::to_string(in_.total() - z_.avail_in) + ": " + (z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return size - z_.avail_out;
  }
  uint64_t raw_bytes() const override { return in_.total(); }

 private:
  RawInput in_;
  z_stream z_{};
  bool ready_ = false, done_ = false, member_ended_ = false;
};

class XzDecompressor final : public Decompressor {
 public:
  XzDecompressor(int fd, std::string path, std::function<void(std::string_view)> on_raw)
      : in_(fd, std::move(path), std::move(on_raw)) {}
  ~XzDecompressor() override { lzma_end(&s_); }
  Status Init() {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) return Internal("liblzma: decoder init failed");
    return Status::Ok();
  }

  Result<size_t> Read(char* out, size_t size) override {
    s_.next_out = reinterpret_cast<uint8_t*>(out);
    s_.avail_out = size;
    while (s_.avail_out == size && !done_) {
      lzma_action action = LZMA_RUN;
      if (s_.avail_in == 0 && !eof_) {
        const unsigned char* data = nullptr;
        size_t n = 0;
        PARITY_ASSIGN_OR_RETURN(bool more, in_.Fill(&data, &n));
        eof_ = !more;
        s_.next_in = data;
        s_.avail_in = n;
      }
      if (eof_) action = LZMA_FINISH;
      const lzma_ret rc = lzma_code(&s_, action);
      if (rc == LZMA_STREAM_END) {
        done_ = true;
      } else if (rc != LZMA_OK) {
        return InvalidArgument(in_.path() + " is not a valid (or a complete) xz file: liblzma error " +
                        std::to_string(static_cast<int>(rc)) + " after " + std::to_string(in_.total()) + " bytes");
      }
    }
    return size - s_.avail_out;
  }
  uint64_t raw_bytes() const override { return in_.total(); }

 private:
  RawInput in_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  bool done_ = false, eof_ = false;
};

class ZstdDecompressor final : public Decompressor {
 public:
  ZstdDecompressor(int fd, std::string path, std::function<void(std::string_view)> on_raw)
      : in_(fd, std::move(path), std::move(on_raw)) {}
  ~ZstdDecompressor() override { ZSTD_freeDStream(z_); }
  Status Init() {
    z_ = ZSTD_createDStream();
    if (!z_ || ZSTD_isError(ZSTD_initDStream(z_))) return Internal("libzstd: decoder init failed");
    // A log's window is small; a frame asking for more than 128 MiB is not one parity reads.
    ZSTD_DCtx_setParameter(z_, ZSTD_d_windowLogMax, 27);
    return Status::Ok();
  }

  Result<size_t> Read(char* out, size_t size) override {
    ZSTD_outBuffer o{out, size, 0};
    while (o.pos == 0 && !done_) {
      if (input_.pos == input_.size) {
        const unsigned char* data = nullptr;
        size_t n = 0;
        PARITY_ASSIGN_OR_RETURN(bool more, in_.Fill(&data, &n));
        if (!more) {
          if (!frame_ended_) return in_.CutOff("zstd", "frame");
          done_ = true;
          break;
        }
        input_ = ZSTD_inBuffer{data, n, 0};
      }
      const size_t rc = ZSTD_decompressStream(z_, &o, &input_);
      if (ZSTD_isError(rc)) {
        return InvalidArgument(in_.path() + " is not valid zstd at compressed byte " +
                               std::to_string(in_.total() - (input_.size - input_.pos)) + ": " + ZSTD_getErrorName(rc));
      }
      frame_ended_ = rc == 0;  // 0: a frame is complete (another may follow)
    }
    return o.pos;
  }
  uint64_t raw_bytes() const override { return in_.total(); }

 private:
  RawInput in_;
  ZSTD_DStream* z_ = nullptr;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  bool done_ = false, frame_ended_ = true;
};

}  // namespace

Compression DetectCompression(const unsigned char* b, size_t n) {
  if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) return Compression::kGzip;
  static constexpr unsigned char kXz[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
  if (n >= 6 && std::memcmp(b, kXz, 6) == 0) return Compression::kXz;
  static constexpr unsigned char kZstd[4] = {0x28, 0xB5, 0x2F, 0xFD};
  if (n >= 4 && std::memcmp(b, kZstd, 4) == 0) return Compression::kZstd;
  return Compression::kNone;
}

std::string WithoutCompressionSuffix(std::string name) {
  for (std::string_view z : {".gz", ".xz", ".zst"}) {
    if (name.size() > z.size() && name.compare(name.size() - z.size(), z.size(), z) == 0) {
      name.resize(name.size() - z.size());
      break;
    }
  }
  return name;
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip: return "gzip";
    case Compression::kXz: return "xz";
    case Compression::kZstd: return "zstd";
    case Compression::kNone: return "none";
  }
  return "none";
}

Result<std::unique_ptr<Decompressor>> OpenDecompressor(int fd, Compression c, std::string path,
                                                       std::function<void(std::string_view)> on_raw) {
  if (c == Compression::kGzip) {
    auto d = std::make_unique<GzipDecompressor>(fd, std::move(path), std::move(on_raw));
    PARITY_RETURN_IF_ERROR(d->Init());
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  if (c == Compression::kXz) {
    auto d = std::make_unique<XzDecompressor>(fd, std::move(path), std::move(on_raw));
    PARITY_RETURN_IF_ERROR(d->Init());
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  if (c == Compression::kZstd) {
    auto d = std::make_unique<ZstdDecompressor>(fd, std::move(path), std::move(on_raw));
    PARITY_RETURN_IF_ERROR(d->Init());
    return std::unique_ptr<Decompressor>(std::move(d));
  }
  return InvalidArgument("not a compressed file: " + path);
}

}  // namespace parity::logs
