// Where parity runs a command: this machine, or a host reached over SSH (libssh). Both run
// an argv to completion under a timeout and an output cap and return support's
// ProcessResult, so job control, environment probing and log streaming are written once.
//
// Over SSH the argv is shell-quoted into the exec request (the remote sshd always hands it
// to the user's shell); the host key is checked against known_hosts before anything is
// sent, and an unknown or changed key is refused with its SHA256 fingerprint. A password is
// only ever read from the environment variable the caller names, and is never logged.
//
// Files move through the same channel: ExecToFile streams a command's stdout into a local
// file chunk by chunk (a remote dump.json can be GiBs: it is never held in memory), and
// DownloadFile / UploadFile are `cat` on the host with the path as an argv word, never
// interpolated into shell text.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"
#include "support/subprocess.h"

namespace parity::run {

struct SshTarget {
  std::string host;
  std::string user;  // empty: the local user name
  int port = 22;
  std::optional<std::filesystem::path> identity_file;  // else the agent, then ~/.ssh/id_*
  std::optional<std::string> password_env;             // name of a variable holding the password
  std::optional<std::filesystem::path> known_hosts;    // default ~/.ssh/known_hosts
  int connect_timeout_s = 15;

  // "user@host:port", as recorded in the ledger's command.host.
  std::string Describe() const;
};

struct ExecOptions {
  std::optional<std::chrono::milliseconds> timeout = std::chrono::minutes(2);
  size_t output_cap = 16u << 20;
  std::map<std::string, std::string> env_set;
  std::string stdin_data;
  CancellationToken cancel;
};

// Where ExecToFile puts stdout: `path` (created or truncated), at most max_bytes of it.
struct FileSink {
  std::filesystem::path path;
  uint64_t max_bytes = uint64_t{64} << 30;
};

class Host {
 public:
  virtual ~Host() = default;
  // "local" or "user@host:port".
  virtual std::string Describe() const = 0;
  virtual bool is_local() const = 0;
  // Runs argv to completion. An error means the command could not be run at all (could not
  // start, connection lost); a command that ran and failed is a ProcessResult.
  virtual Result<ProcessResult> Exec(const std::vector<std::string>& argv, const ExecOptions& options) = 0;
  // Runs argv like Exec, but stdout is written to sink.path as it arrives (the result's
  // `out` stays empty; stderr is kept, capped). An error when the file cannot be written or
  // the output exceeds sink.max_bytes (the command is stopped, the partial file removed).
  virtual Result<ProcessResult> ExecToFile(const std::vector<std::string>& argv, const FileSink& sink,
                                           const ExecOptions& options) = 0;
  // Drops and re-establishes the connection (no-op locally); used after a lost connection.
  virtual Status Reconnect() = 0;
};

std::unique_ptr<Host> MakeLocalHost();
// Connects and authenticates now, so host-key and login problems surface before any work.
Result<std::unique_ptr<Host>> ConnectSsh(const SshTarget& target);

// Connects to `target` when given, otherwise returns the local host.
Result<std::unique_ptr<Host>> OpenHost(const std::optional<SshTarget>& target);

// "<what> on <host> failed: exit code 2" (or timed out / cancelled), with the command, the
// exit status and the last lines of stderr and stdout as evidence.
Status HostCommandFailure(const std::string& what, const Host& host, const std::vector<std::string>& argv,
                          const ProcessResult& result);

struct TransferOptions {
  uint64_t max_bytes = uint64_t{64} << 30;
  std::chrono::milliseconds timeout = std::chrono::minutes(30);
  CancellationToken cancel;
};

// Copies `remote_path` on `host` to `local_path` (through a sibling ".part" file, renamed
// when complete), streamed; returns the bytes copied. A missing or unreadable file is an
// error naming the host, the path and cat's exit status and message.
Result<uint64_t> DownloadFile(Host& host, const std::string& remote_path, const std::filesystem::path& local_path,
                              const TransferOptions& options = {});

// Writes `bytes` to `remote_path` on `host` (created or truncated; its folder must exist).
Status UploadFile(Host& host, const std::string& bytes, const std::string& remote_path,
                  const TransferOptions& options = {});

}  // namespace parity::run
