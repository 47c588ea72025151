#include "support/file_read.h"

#include <fstream>

namespace parity {

Result<std::string> ReadFileLimited(const std::filesystem::path& path, uint64_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return NotFound(path.string() + ": " + ec.message());
  if (size > max_bytes) {
    return InvalidArgument(path.string() + ": " + std::to_string(size) + " bytes, more than the limit of " +
                           std::to_string(max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unavailable(path.string() + ": cannot be opened for reading");
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) return Unavailable(path.string() + ": short read");
  return text;
}

Result<std::string> ReadFilePrefix(const std::filesystem::path& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path.string());
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

}  // namespace parity
