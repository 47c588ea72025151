#include "domain/run/host.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <functional>
#include <unistd.h>

#include "support/safe_file.h"
#include "support/ssh_dl.h"

namespace parity::run {

namespace {

// stdout chunks of ExecToFile go here; the first failure (write error, over the limit) stops
// the command and is the call's error.
class FileWriter {
 public:
  // The ".part" file is opened through no symlink (support/safe_file.h), so one planted
  // under that name in the report directory cannot redirect a download.
  explicit FileWriter(const FileSink& sink) : sink_(sink), file_(nullptr) {
    auto fd = OpenUnder(sink.path.parent_path().empty() ? "." : sink.path.parent_path(), sink.path.filename(),
                        O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) {
      error_ = std::move(fd).take_status().Context("cannot create " + sink.path.string());
      return;
    }
    file_ = ::fdopen(fd->get(), "wb");
    if (!file_) error_ = Unavailable("cannot create " + sink.path.string() + ": " + std::strerror(errno));
    else fd->release();
  }
  ~FileWriter() {
    if (file_) std::fclose(file_);
  }
  bool Write(const char* data, size_t n) {
    if (!error_.ok()) return false;
    if (written_ + n > sink_.max_bytes) {
      error_ = FailedPrecondition("the output exceeds the limit of " + std::to_string(sink_.max_bytes) + " bytes for " +
                                  sink_.path.string() + "; the transfer was stopped");
      return false;
    }
    if (std::fwrite(data, 1, n, file_) != n) {
      error_ = Unavailable("cannot write " + sink_.path.string() + ": " + std::strerror(errno));
      return false;
    }
    written_ += n;
    return true;
  }
  // Flushes and closes; on any failure the partial file is removed.
  Status Close() {
    if (file_ && std::fclose(file_) != 0 && error_.ok()) {
      error_ = Unavailable("cannot write " + sink_.path.string() + ": " + std::strerror(errno));
    }
    file_ = nullptr;
    if (!error_.ok()) {
      std::error_code ec;
      std::filesystem::remove(sink_.path, ec);
    }
    return error_;
  }
  const Status& error() const { return error_; }

 private:
  const FileSink& sink_;
  std::FILE* file_;
  uint64_t written_ = 0;
  Status error_ = Status::Ok();
};

constexpr size_t kSinkStderrCap = 64u << 10;

class LocalHost final : public Host {
 public:
  std::string Describe() const override { return "local"; }
  bool is_local() const override { return true; }
  Result<ProcessResult> Exec(const std::vector<std::string>& argv, const ExecOptions& options) override {
    ProcessOptions p;
    p.argv = argv;
    p.env_set = options.env_set;
    p.timeout = options.timeout;
    p.output_cap = options.output_cap;
    p.stdin_data = options.stdin_data;
    p.cancel = options.cancel;
    return RunProcess(p);
  }
  Result<ProcessResult> ExecToFile(const std::vector<std::string>& argv, const FileSink& sink,
                                   const ExecOptions& options) override {
    FileWriter writer(sink);
    PARITY_RETURN_IF_ERROR(writer.error());
    // The command is stopped through its own token when the writer fails; the caller's
    // cancellation is passed on from the same callback (a download never stays silent).
    CancellationSource stop;
    ProcessOptions p;
    p.argv = argv;
    p.env_set = options.env_set;
    p.timeout = options.timeout;
    p.output_cap = kSinkStderrCap;  // the in-memory copy of stdout is only ever this much
    p.stdin_data = options.stdin_data;
    p.cancel = stop.token();
    p.on_output = [&](std::string_view chunk) {
      if (!writer.Write(chunk.data(), chunk.size()) || options.cancel.cancelled()) stop.Cancel();
    };
    auto r = RunProcess(p);
    Status closed = writer.Close();
    if (!r.ok()) return r;
    PARITY_RETURN_IF_ERROR(closed);
    r->out.clear();
    return r;
  }
  Status Reconnect() override { return Status::Ok(); }
};

std::string SshError(const SshApi& ssh, ssh_session session) { return ssh.get_error(session); }

std::filesystem::path DefaultKnownHosts() {
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : "/") / ".ssh" / "known_hosts";
}

// "SHA256:<base64>" of the server's host key, or a note why it is not available.
std::string ServerKeyFingerprint(const SshApi& ssh, ssh_session session) {
  ssh_key key = nullptr;
  if (ssh.get_server_publickey(session, &key) != SSH_OK) return "(server key unavailable)";
  unsigned char* hash = nullptr;
  size_t hash_len = 0;
  std::string out = "(fingerprint unavailable)";
  if (ssh.get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hash_len) == 0) {
    char* text = ssh.get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hash_len);
    if (text) {
      out = text;
      ssh.string_free_char(text);
    }
    ssh.clean_pubkey_hash(&hash);
  }
  const char* type = ssh.key_type_to_char(ssh.key_type(key));
  if (type) out = std::string(type) + " " + out;
  ssh.key_free(key);
  return out;
}

class SshHost final : public Host {
 public:
  SshHost(const SshApi& ssh, SshTarget target) : ssh_(ssh), target_(std::move(target)) {}
  ~SshHost() override { Disconnect(); }

  std::string Describe() const override { return target_.Describe(); }
  bool is_local() const override { return false; }

  Status Connect() {
    Disconnect();
    session_ = ssh_.session_new();
    if (!session_) return Internal("libssh: ssh_new failed");
    long timeout = target_.connect_timeout_s;
    int port = target_.port;
    std::string known_hosts = (target_.known_hosts ? *target_.known_hosts : DefaultKnownHosts()).string();
    ssh_.options_set(session_, SSH_OPTIONS_HOST, target_.host.c_str());
    ssh_.options_set(session_, SSH_OPTIONS_PORT, &port);
    ssh_.options_set(session_, SSH_OPTIONS_TIMEOUT, &timeout);
    ssh_.options_set(session_, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str());
    if (target_.known_hosts) ssh_.options_set(session_, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, known_hosts.c_str());
    if (!target_.user.empty()) ssh_.options_set(session_, SSH_OPTIONS_USER, target_.user.c_str());

    if (ssh_.connect(session_) != SSH_OK) {
      return Unavailable("cannot connect to " + Describe() + ": " + SshError(ssh_, session_))
          .WithHint("check the host, port and that sshd is running and reachable");
    }
    PARITY_RETURN_IF_ERROR(VerifyHostKey(known_hosts));
    return Authenticate();
  }

  Status Reconnect() override { return Connect(); }

  Result<ProcessResult> Exec(const std::vector<std::string>& argv, const ExecOptions& options) override {
    return Run(argv, options, [&options](ProcessResult& result, const char* data, size_t n) {
      size_t room = options.output_cap > result.out.size() ? options.output_cap - result.out.size() : 0;
      if (n > room) result.truncated = true;
      result.out.append(data, std::min(room, n));
      return true;
    });
  }

  Result<ProcessResult> ExecToFile(const std::vector<std::string>& argv, const FileSink& sink,
                                   const ExecOptions& options) override {
    FileWriter writer(sink);
    PARITY_RETURN_IF_ERROR(writer.error());
    ExecOptions capped = options;
    capped.output_cap = kSinkStderrCap;
    auto r = Run(argv, capped, [&writer](ProcessResult&, const char* data, size_t n) { return writer.Write(data, n); });
    Status closed = writer.Close();
    if (!r.ok()) return r;
    PARITY_RETURN_IF_ERROR(closed);
    return r;
  }

 private:
  // Runs argv on a new channel; stdout chunks go to `on_stdout` (false stops the command),
  // stderr is kept up to options.output_cap.
  Result<ProcessResult> Run(const std::vector<std::string>& argv, const ExecOptions& options,
                            const std::function<bool(ProcessResult&, const char*, size_t)>& on_stdout) {
    if (!session_ || !ssh_.is_connected(session_)) {
      return Unavailable("the SSH connection to " + Describe() + " is closed");
    }
    std::vector<std::string> full;
    if (!options.env_set.empty()) {
      full.push_back("env");
      for (const auto& [k, v] : options.env_set) full.push_back(k + "=" + v);
    }
    full.insert(full.end(), argv.begin(), argv.end());
    std::string command = ShellQuote(full);

    ssh_channel channel = ssh_.channel_new(session_);
    if (!channel) return Unavailable("SSH channel to " + Describe() + ": " + SshError(ssh_, session_));
    struct Closer {
      const SshApi& ssh;
      ssh_channel c;
      ~Closer() { ssh.channel_close(c); ssh.channel_free(c); }
    } closer{ssh_, channel};
    if (ssh_.channel_open_session(channel) != SSH_OK) {
      return Unavailable("SSH session channel to " + Describe() + " failed: " + SshError(ssh_, session_))
          .WithHint("the connection may have been lost; parity reconnects on the next call");
    }
    if (ssh_.channel_request_exec(channel, command.c_str()) != SSH_OK) {
      return Unavailable("SSH exec on " + Describe() + " failed: " + SshError(ssh_, session_));
    }
    if (!options.stdin_data.empty()) {
      size_t sent = 0;
      while (sent < options.stdin_data.size()) {
        int n = ssh_.channel_write(channel, options.stdin_data.data() + sent,
                                   static_cast<uint32_t>(options.stdin_data.size() - sent));
        if (n == SSH_ERROR) return Unavailable("SSH write to " + Describe() + ": " + SshError(ssh_, session_));
        sent += static_cast<size_t>(n);
      }
    }
    ssh_.channel_send_eof(channel);

    ProcessResult result;
    auto start = std::chrono::steady_clock::now();
    char buf[16384];
    auto append = [&](std::string& to, const char* data, int n) {
      size_t room = options.output_cap > to.size() ? options.output_cap - to.size() : 0;
      if (static_cast<size_t>(n) > room) result.truncated = true;
      to.append(data, std::min(room, static_cast<size_t>(n)));
    };
    while (true) {
      int n = ssh_.channel_read_timeout(channel, buf, sizeof buf, 0, 100);
      if (n == SSH_ERROR) {
        return Unavailable("SSH connection to " + Describe() + " lost while running " + ShellQuote(argv) +
                           ": " + SshError(ssh_, session_));
      }
      if (n > 0 && !on_stdout(result, buf, static_cast<size_t>(n))) {
        result.cancelled = true;  // the consumer refused more: its own error tells why
        break;
      }
      int e = ssh_.channel_read_nonblocking(channel, buf, sizeof buf, 1);
      if (e == SSH_ERROR) {
        return Unavailable("SSH connection to " + Describe() + " lost: " + SshError(ssh_, session_));
      }
      if (e > 0) append(result.err, buf, e);
      if (n <= 0 && e <= 0 && ssh_.channel_is_eof(channel)) break;
      auto elapsed = std::chrono::steady_clock::now() - start;
      if (options.timeout && elapsed > *options.timeout) { result.timed_out = true; break; }
      if (options.cancel.cancelled()) { result.cancelled = true; break; }
    }
    if (!result.timed_out && !result.cancelled) result.exit_code = ssh_.channel_get_exit_status(channel);
    result.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

 private:
  Status VerifyHostKey(const std::string& known_hosts) {
    enum ssh_known_hosts_e state = ssh_.session_is_known_server(session_);
    std::string fingerprint = ServerKeyFingerprint(ssh_, session_);
    std::string where = "[" + target_.host + "]:" + std::to_string(target_.port);
    switch (state) {
      case SSH_KNOWN_HOSTS_OK:
        return Status::Ok();
      case SSH_KNOWN_HOSTS_CHANGED:
      case SSH_KNOWN_HOSTS_OTHER:
        return FailedPrecondition("the host key of " + Describe() + " does not match " + known_hosts +
                                  " (server presents " + fingerprint + "); refusing to connect")
            .WithHint("this can be a man-in-the-middle. If the host was really reinstalled, verify " +
                      fingerprint + " with its administrator, then `ssh-keygen -R '" + where + "' -f " +
                      known_hosts + "` and add the new key")
            .WithEvidence("fingerprint", fingerprint)
            .WithEvidence("known_hosts", known_hosts);
      case SSH_KNOWN_HOSTS_UNKNOWN:
      case SSH_KNOWN_HOSTS_NOT_FOUND:
        return FailedPrecondition("the host key of " + Describe() + " is not in " + known_hosts +
                                  " (server presents " + fingerprint + "); refusing to connect")
            .WithHint("verify the fingerprint with the host's administrator, then add it, e.g. `ssh-keyscan -p " +
                      std::to_string(target_.port) + " " + target_.host + " >> " + known_hosts +
                      "` or log in once with ssh and accept it")
            .WithEvidence("fingerprint", fingerprint)
            .WithEvidence("known_hosts", known_hosts);
      case SSH_KNOWN_HOSTS_ERROR:
      default:
        return Unavailable("cannot check the host key of " + Describe() + " against " + known_hosts + ": " +
                           SshError(ssh_, session_));
    }
  }

  Status Authenticate() {
    std::vector<std::string> tried;
    int rc = ssh_.userauth_none(session_, nullptr);
    if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
    if (target_.identity_file) {
      tried.push_back("key " + target_.identity_file->string());
      ssh_key key = nullptr;
      if (ssh_.pki_import_privkey_file(target_.identity_file->c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
        return InvalidArgument("cannot read the SSH private key " + target_.identity_file->string())
            .WithHint("give an unencrypted key file readable by parity, or use ssh-agent");
      }
      rc = ssh_.userauth_publickey(session_, nullptr, key);
      ssh_.key_free(key);
      if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
    } else {
      if (std::getenv("SSH_AUTH_SOCK")) {
        tried.push_back("ssh-agent");
        if (ssh_.userauth_agent(session_, nullptr) == SSH_AUTH_SUCCESS) return Status::Ok();
      }
      tried.push_back("~/.ssh/id_* keys");
      if (ssh_.userauth_publickey_auto(session_, nullptr, nullptr) == SSH_AUTH_SUCCESS) return Status::Ok();
    }
    if (target_.password_env) {
      const char* password = std::getenv(target_.password_env->c_str());
      if (!password) {
        return InvalidArgument("the password variable " + *target_.password_env + " is not set")
            .WithHint("export it in the environment parity runs in; passwords are never read from files");
      }
      tried.push_back("password from $" + *target_.password_env);
      if (ssh_.userauth_password(session_, nullptr, password) == SSH_AUTH_SUCCESS) return Status::Ok();
    }
    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
    return Unavailable("SSH authentication to " + Describe() + " failed (tried: " + list + ")")
        .WithHint("load a key into ssh-agent, pass identity_file, or name a password variable in password_env");
  }

  void Disconnect() {
    if (!session_) return;
    ssh_.disconnect(session_);
    ssh_.free(session_);
    session_ = nullptr;
  }

  const SshApi& ssh_;
  SshTarget target_;
  ssh_session session_ = nullptr;
};

}  // namespace

std::string SshTarget::Describe() const {
  std::string u = user;
  if (u.empty()) {
    const char* env_user = std::getenv("USER");
    u = env_user ? env_user : "";
  }
  return (u.empty() ? "" : u + "@") + host + ":" + std::to_string(port);
}

std::unique_ptr<Host> MakeLocalHost() { return std::make_unique<LocalHost>(); }

Result<std::unique_ptr<Host>> ConnectSsh(const SshTarget& target) {
  if (target.host.empty()) return InvalidArgument("SSH target has no host");
  PARITY_ASSIGN_OR_RETURN(const SshApi* ssh, LoadSsh());
  auto host = std::make_unique<SshHost>(*ssh, target);
  PARITY_RETURN_IF_ERROR(host->Connect());
  return std::unique_ptr<Host>(std::move(host));
}

Result<std::unique_ptr<Host>> OpenHost(const std::optional<SshTarget>& target) {
  if (!target) return MakeLocalHost();
  return ConnectSsh(*target);
}

Status HostCommandFailure(const std::string& what, const Host& host, const std::vector<std::string>& argv,
                          const ProcessResult& r) {
  return CommandFailure(what + " on " + host.Describe(), argv, r);
}

Result<uint64_t> DownloadFile(Host& host, const std::string& remote_path, const std::filesystem::path& local_path,
                              const TransferOptions& options) {
  const std::vector<std::string> argv = {"cat", "--", remote_path};
  FileSink sink{local_path.string() + ".part", options.max_bytes};
  ExecOptions exec;
  exec.timeout = options.timeout;
  exec.cancel = options.cancel;
  const std::string what = "downloading " + remote_path;
  auto r = host.ExecToFile(argv, sink, exec);
  if (!r.ok()) return std::move(r).take_status().Context(what + " from " + host.Describe());
  std::error_code ec;
  if (!r->success()) {
    std::filesystem::remove(sink.path, ec);
    return HostCommandFailure(what, host, argv, *r);
  }
  std::filesystem::rename(sink.path, local_path, ec);
  if (ec) return Unavailable("cannot rename " + sink.path.string() + " to " + local_path.string() + ": " + ec.message());
  uint64_t size = std::filesystem::file_size(local_path, ec);
  return ec ? 0 : size;
}

Status UploadFile(Host& host, const std::string& bytes, const std::string& remote_path, const TransferOptions& options) {
  if (bytes.size() > options.max_bytes) {
    return FailedPrecondition("uploading " + remote_path + ": " + std::to_string(bytes.size()) + " bytes exceed the limit of " +
                              std::to_string(options.max_bytes));
  }
  // The path is the shell's $1, never part of the script's text.
  const std::vector<std::string> argv = {"sh", "-c", "cat > \"$1\"", "sh", remote_path};
  ExecOptions exec;
  exec.timeout = options.timeout;
  exec.cancel = options.cancel;
  exec.stdin_data = bytes;
  exec.output_cap = 64u << 10;
  const std::string what = "uploading " + remote_path;
  auto r = host.Exec(argv, exec);
  if (!r.ok()) return std::move(r).take_status().Context(what + " to " + host.Describe());
  if (!r->success()) return HostCommandFailure(what, host, argv, *r);
  return Status::Ok();
}

}  // namespace parity::run
