#include "e2e_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace parity::report::testing {

namespace fs = std::filesystem;

namespace {

fs::path ScratchRoot() { return fs::temp_directory_path() / ("parity_report_e2e_" + std::to_string(::getpid())); }

// Removes this process's scratch directory when its tests passed; keeps it for a look when not.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (::testing::UnitTest::GetInstance()->Passed()) {
      std::error_code ec;
      fs::remove_all(ScratchRoot(), ec);
    } else if (fs::exists(ScratchRoot())) {
      std::fprintf(stderr, "test files kept in %s\n", ScratchRoot().c_str());
    }
  }
};

[[maybe_unused]] ::testing::Environment* const kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

fs::path FixtureReportDir(const std::string& fixture_case) {
  return fs::path(PARITY_REPORT_FIXTURE) / fixture_case / "numerical_report";
}

fs::path ScratchDir(const std::string& name) {
  fs::path dir = ScratchRoot() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path CopyReportDir(const std::string& fixture_case, const std::string& test_name) {
  fs::path dest = ScratchDir(test_name) / "numerical_report";
  fs::copy(FixtureReportDir(fixture_case), dest, fs::copy_options::recursive);
  fs::remove_all(dest / "report");  // outputs of earlier renders, if any
  return dest;
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json ReadJson(const fs::path& path) {
  return nlohmann::json::parse(Slurp(path), nullptr, /*allow_exceptions=*/false);
}

ProcessResult RunOrFail(const std::vector<std::string>& argv, int timeout_s) {
  ProcessOptions p;
  p.argv = argv;
  p.merge_stderr = true;
  p.timeout = std::chrono::seconds(timeout_s);
  auto r = RunProcess(p);
  if (!r.ok()) {
    ADD_FAILURE() << "cannot run " << ShellQuote(argv) << ": " << r.status().ToString();
    return ProcessResult{};
  }
  return std::move(r).value();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace parity::report::testing
