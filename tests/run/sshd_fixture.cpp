#include "tests/run/sshd_fixture.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <vector>
#include <sstream>
#include <thread>

#include "tests/run/toy_repo.h"

namespace parity::testing {

namespace fs = std::filesystem;

namespace {

int FreePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

bool Accepts(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

SshdFixture::SshdFixture(const std::string& extra_config) {
  char tmpl[] = "/tmp/parity-sshd-XXXXXX";
  dir_ = ::mkdtemp(tmpl);
  try {
    fs::create_directories("/run/sshd");  // sshd's privilege-separation directory must exist
    Capture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "parity-test-host", "-f", (dir_ / "host_key").string()});
    Capture({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "parity-test-user", "-f", user_key().string()});
  } catch (const std::exception& e) {
    error_ = e.what();
    return;
  }
  fs::copy_file(dir_ / "user_key.pub", dir_ / "authorized_keys");
  port_ = FreePort();
  std::ofstream(dir_ / "sshd_config") << "Port " << port_ << "\n"
                                      << "ListenAddress 127.0.0.1\n"
                                      << "HostKey " << (dir_ / "host_key").string() << "\n"
                                      << "AuthorizedKeysFile " << (dir_ / "authorized_keys").string() << "\n"
                                      << "PidFile " << (dir_ / "sshd.pid").string() << "\n"
                                      << "StrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n"
                                      << "KbdInteractiveAuthentication no\nUsePAM no\nLogLevel ERROR\n"
                                      << extra_config;
  std::string host_pub = Read(dir_ / "host_key.pub");
  std::ofstream(known_hosts()) << "[127.0.0.1]:" << port_ << " " << host_pub;

  pid_ = ::fork();
  if (pid_ == 0) {
    std::string config = (dir_ / "sshd_config").string();
    std::string log = (dir_ / "sshd.log").string();
    ::execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", config.c_str(), "-E", log.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 100 && !Accepts(port_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!Accepts(port_)) {
    error_ = "sshd did not start: " + Read(dir_ / "sshd.log");
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

SshdFixture::~SshdFixture() {
  if (pid_ > 0) {
    KillConnections();
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string SshdFixture::host_key_fingerprint() const {
  return Capture({"ssh-keygen", "-lf", (dir_ / "host_key.pub").string()});
}

run::SshTarget SshdFixture::Target() const {
  run::SshTarget t;
  t.host = "127.0.0.1";
  t.user = "root";
  t.port = port_;
  t.identity_file = user_key();
  t.known_hosts = known_hosts();
  return t;
}

int SshdFixture::KillConnections() const {
  // Every descendant of the listener: the [priv] monitor and the user's session process.
  std::map<int, std::vector<int>> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    int ppid = 0;
    rest >> state >> ppid;
    children[ppid].push_back(std::stoi(name));
  }
  std::vector<int> doomed, queue = {pid_};
  while (!queue.empty()) {
    int p = queue.back();
    queue.pop_back();
    for (int c : children[p]) {
      doomed.push_back(c);
      queue.push_back(c);
    }
  }
  for (int p : doomed) ::kill(p, SIGKILL);
  return static_cast<int>(doomed.size());
}

}  // namespace parity::testing
