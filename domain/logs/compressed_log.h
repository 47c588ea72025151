// Compressed logs read as text, transparently: gzip (zlib; concatenated members too, as
// `gzip -c a b` or logrotate's appends give), xz (liblzma) and zstd (libzstd; concatenated
// frames too). Recognised by their magic
// bytes, not their name. The decompressor reads the file descriptor itself and hands out
// the text in blocks; its raw bytes can be seen (for the sha256 of the file as stored).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "support/status.h"

namespace parity::logs {

enum class Compression { kNone, kGzip, kXz, kZstd };

// From the file's first bytes (at least 6 for xz).
Compression DetectCompression(const unsigned char* first, size_t n);
const char* CompressionName(Compression c);
// A file name without the suffix of a compression parity reads (.gz, .xz, .zst), if any.
std::string WithoutCompressionSuffix(std::string name);

class Decompressor {
 public:
  virtual ~Decompressor() = default;
  // Up to `size` bytes of text; 0 at the end. An error names the byte offset in the file.
  virtual Result<size_t> Read(char* out, size_t size) = 0;
  // Bytes of the compressed file consumed so far.
  virtual uint64_t raw_bytes() const = 0;
};

// Reads `fd` from its current offset; `on_raw` (optional) sees every compressed byte read.
Result<std::unique_ptr<Decompressor>> OpenDecompressor(int fd, Compression c, std::string path,
                                                       std::function<void(std::string_view)> on_raw);

}  // namespace parity::logs
