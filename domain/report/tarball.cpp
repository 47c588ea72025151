#include "domain/report/tarball.h"

#include <cstring>

#include <zlib.h>

namespace parity::report {

namespace {

std::string Field(const char* p, size_t n) { return std::string(p, strnlen(p, n)); }

uint64_t Octal(const char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && p[i]; ++i) {
    if (p[i] >= '0' && p[i] <= '7') v = v * 8 + (p[i] - '0');
  }
  return v;
}

}  // namespace

Result<std::vector<std::string>> ListTarGz(const std::filesystem::path& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) return NotFound("cannot open " + path.string());
  std::vector<std::string> files;
  std::string long_name;
  char block[512];
  Status status;
  constexpr size_t kMaxEntries = 1 << 20;
  while (files.size() < kMaxEntries) {
    int n = gzread(gz, block, sizeof block);
    if (n == 0) break;
    if (n != static_cast<int>(sizeof block)) {
      status = InvalidArgument(path.string() + ": truncated tar archive");
      break;
    }
    bool zero = true;
    for (char c : block) zero = zero && c == 0;
    if (zero) break;
    uint64_t size = Octal(block + 124, 12);
    char type = block[156];
    std::string name = Field(block, 100);
    std::string prefix = Field(block + 345, 155);
    if (std::memcmp(block + 257, "ustar", 5) == 0 && !prefix.empty()) name = prefix + "/" + name;
    uint64_t padded = (size + 511) / 512 * 512;
    if (type == 'L') {  // GNU long name: the next block(s) hold the real name
      std::string data(padded, '\0');
      if (gzread(gz, data.data(), static_cast<unsigned>(padded)) != static_cast<int>(padded)) {
        status = InvalidArgument(path.string() + ": truncated tar archive");
        break;
      }
      long_name = Field(data.data(), size);
      continue;
    }
    if (!long_name.empty()) name = std::move(long_name), long_name.clear();
    if (type == '0' || type == '\0') {
      while (name.rfind("./", 0) == 0) name.erase(0, 2);
      files.push_back(name);
    }
    if (padded > 0 && gzseek(gz, static_cast<z_off_t>(padded), SEEK_CUR) < 0) {
      status = InvalidArgument(path.string() + ": truncated tar archive");
      break;
    }
  }
  gzclose(gz);
  if (!status.ok()) return status;
  return files;
}

}  // namespace parity::report
