// A fake Ascend host on the local disk: CANN toolkit tree (version.cfg, install info, the
// `latest` symlink), driver version.info, davinci device nodes as plain files, and a
// stand-in `npu-smi` printing the real table format (formats.md §5.4). Everything else the
// probe reads (Python, torch, /proc) is this machine's.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace parity::testing {

class AscendFixture {
 public:
  AscendFixture();
  ~AscendFixture();

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path ascend() const { return root_ / "Ascend"; }
  std::filesystem::path toolkit_latest() const { return root_ / "Ascend/ascend-toolkit/latest"; }
  std::filesystem::path dev() const { return root_ / "dev"; }
  std::filesystem::path empty_dir() const { return root_ / "empty"; }
  // Environment for a probe that sees the fake host: PATH with npu-smi, ASCEND_* set.
  std::map<std::string, std::string> AscendEnv() const;
  // Replaces the stand-in npu-smi with one that fails like a host without a working driver.
  void BreakNpuSmi();

 private:
  std::filesystem::path root_;
};

std::string WriteFile(const std::filesystem::path& path, const std::string& text, bool executable = false);
// stdout of `/usr/bin/python3 -c <code>`, trimmed; for expectations read from the real system.
std::string PythonSays(const std::string& code);

}  // namespace parity::testing
