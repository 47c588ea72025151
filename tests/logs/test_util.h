// Helpers shared by the logs tests: fixture paths and scratch directories.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace parity::logs::testing {

inline std::filesystem::path Fixture(const std::string& name) {
  return std::filesystem::path(PARITY_LOGS_FIXTURES) / name;
}

// A fresh directory under the system temp dir, removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "parity-logs-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path Write(const std::string& name, const std::string& bytes) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());  // "runs/a/rank_0.log"
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace parity::logs::testing
