// A real OpenSSH server for tests: /usr/sbin/sshd -D on a free loopback port with a
// throwaway host key, a throwaway user key in its AuthorizedKeysFile, and a known_hosts
// file naming the host key, all in a temporary directory. Runs as the current user (root
// here, hence PermitRootLogin in the test config).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "domain/run/host.h"

namespace parity::testing {

class SshdFixture {
 public:
  // `extra_config`: more sshd_config lines ("SetEnv SLURM_CONF=...": what a cluster's login
  // node has in its own configuration).
  explicit SshdFixture(const std::string& extra_config = "");
  ~SshdFixture();
  bool ok() const { return pid_ > 0; }
  const std::string& error() const { return error_; }

  int port() const { return port_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path known_hosts() const { return dir_ / "known_hosts"; }
  std::filesystem::path user_key() const { return dir_ / "user_key"; }
  // `ssh-keygen -lf` of the host key: "256 SHA256:... comment (ED25519)".
  std::string host_key_fingerprint() const;
  run::SshTarget Target() const;
  // Kills the per-connection sshd processes (not the listener): every open SSH connection dies.
  int KillConnections() const;

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace parity::testing
