#include "support/subprocess.h"

#include "support/child_environment.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

extern char** environ;

namespace parity {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps the first and last halves of a stream when it exceeds the cap.
class CappedBuffer {
 public:
  explicit CappedBuffer(size_t cap) : cap_(cap == 0 ? 1 : cap) {}
  void Append(std::string_view data) {
    total_ += data.size();
    size_t head_room = cap_ / 2 > head_.size() ? cap_ / 2 - head_.size() : 0;
    size_t to_head = std::min(head_room, data.size());
    head_.append(data.substr(0, to_head));
    data.remove_prefix(to_head);
    if (data.empty()) return;
    tail_.append(data);
    size_t tail_cap = cap_ - cap_ / 2;
    if (tail_.size() > 2 * tail_cap) tail_.erase(0, tail_.size() - tail_cap);
  }
  bool truncated() const { return total_ > cap_; }
  std::string Take() {
    size_t tail_cap = cap_ - cap_ / 2;
    if (tail_.size() > tail_cap) tail_.erase(0, tail_.size() - tail_cap);
    if (!truncated()) return head_ + tail_;
    size_t dropped = total_ - head_.size() - tail_.size();
    return head_ + "\n[... " + std::to_string(dropped) + " bytes of output omitted ...]\n" + tail_;
  }

 private:
  size_t cap_;
  size_t total_ = 0;
  std::string head_, tail_;
};

std::atomic<EnvironmentFilter> g_env_filter{nullptr};

std::vector<std::string> BuildEnvironment(const ProcessOptions& options) {
  std::map<std::string, std::string> env;
  EnvironmentFilter filter = g_env_filter.load();
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    if (filter && !filter(kv.substr(0, eq))) continue;
    env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  for (const auto& name : options.env_unset) env.erase(name);
  for (const auto& [k, v] : options.env_set) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

const char* SignalName(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGINT: return "SIGINT";
    case SIGBUS: return "SIGBUS";
    case SIGPIPE: return "SIGPIPE";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}

}  // namespace

void SetChildEnvironmentFilter(EnvironmentFilter filter) { g_env_filter.store(filter); }

std::string ProcessResult::Describe() const {
  if (cancelled) return "cancelled";
  if (timed_out) return "timed out after " + std::to_string(static_cast<long>(duration_s)) + " s";
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + SignalName(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

std::optional<std::filesystem::path> FindExecutable(std::string_view name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string_view::npos) {
    if (access(std::string(name).c_str(), X_OK) == 0) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) dir = ".";
    std::filesystem::path candidate = std::filesystem::path(std::string(dir)) / std::string(name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

Result<ProcessResult> RunProcess(const ProcessOptions& options) {
  if (options.argv.empty()) return InvalidArgument("RunProcess: empty argv");
  std::optional<std::filesystem::path> exe = FindExecutable(options.argv[0]);
  if (!exe) {
    return Unavailable("cannot run `" + options.argv[0] + "`: not found on PATH or not executable")
        .WithEvidence("command", ShellQuote(options.argv));
  }
  if (!options.cwd.empty() && !std::filesystem::is_directory(options.cwd)) {
    return NotFound("working directory does not exist: " + options.cwd.string())
        .WithEvidence("command", ShellQuote(options.argv));
  }

  int out_pipe[2], err_pipe[2], in_pipe[2], exec_err[2];
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(in_pipe, O_CLOEXEC) ||
      pipe2(exec_err, O_CLOEXEC)) {
    return Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<std::string> env = BuildEnvironment(options);
  std::vector<char*> envp, argvp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = options.argv;
  for (auto& a : argv_copy) argvp.push_back(a.data());
  argvp.push_back(nullptr);
  std::string exe_path = exe->string();
  std::string cwd = options.cwd.string();

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) return Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    // A child starts with a clean signal state whatever thread forked it: `serve --http`
    // blocks SIGINT/SIGTERM in every thread to take them through sigwait, and a mask (or an
    // ignored disposition) survives execve, so a training would otherwise never see the
    // SIGTERM of a cancel and die only by the SIGKILL after the grace period.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) signal(sig, SIG_DFL);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(options.merge_stderr ? out_pipe[1] : err_pipe[1], 2);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      int e = errno;
      (void)!write(exec_err[1], &e, sizeof e);
      _exit(127);
    }
    execve(exe_path.c_str(), argvp.data(), envp.data());
    int e = errno;
    (void)!write(exec_err[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so kill(-pid) works at once
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_err[1]);

  int child_errno = 0;
  ssize_t n = read(exec_err[0], &child_errno, sizeof child_errno);
  close(exec_err[0]);
  if (n == sizeof child_errno) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    waitpid(pid, nullptr, 0);
    return Unavailable("cannot start `" + options.argv[0] + "`: " + std::strerror(child_errno))
        .WithEvidence("command", ShellQuote(options.argv))
        .WithEvidence("cwd", cwd.empty() ? std::filesystem::current_path().string() : cwd);
  }

  std::ofstream tee;
  if (!options.tee_path.empty()) {
    tee.open(options.tee_path, std::ios::app | std::ios::binary);
    if (!tee) {
      kill(-pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      return Unavailable("cannot open log file for writing: " + options.tee_path.string());
    }
  }

  SetNonBlocking(out_pipe[0]);
  SetNonBlocking(err_pipe[0]);
  SetNonBlocking(in_pipe[1]);
  size_t stdin_written = 0;
  int in_fd = in_pipe[1];
  if (options.stdin_data.empty()) { close(in_fd); in_fd = -1; }
  int out_fd = out_pipe[0], err_fd = err_pipe[0];
  if (options.merge_stderr) { close(err_fd); err_fd = -1; }

  CappedBuffer out_buf(options.output_cap), err_buf(options.output_cap);
  ProcessResult result;
  bool exited = false;
  int wait_status = 0;
  std::optional<Clock::time_point> kill_deadline;  // SIGKILL after the SIGTERM grace period
  std::optional<Clock::time_point> drain_deadline;  // stop reading pipes held by leftovers
  char buf[65536];

  auto terminate_group = [&]() {
    if (!kill_deadline) {
      kill(-pid, SIGTERM);
      kill_deadline = Clock::now() + std::chrono::seconds(3);
    }
  };

  while (true) {
    if (!exited) {
      pid_t w = waitpid(pid, &wait_status, WNOHANG);
      if (w == pid) {
        exited = true;
        drain_deadline = Clock::now() + std::chrono::seconds(2);
      }
    }
    if (exited && out_fd < 0 && err_fd < 0) break;
    if (exited && drain_deadline && Clock::now() > *drain_deadline) break;
    if (!exited) {
      if (options.cancel.cancelled() && !result.cancelled) { result.cancelled = true; terminate_group(); }
      if (options.timeout && !result.timed_out && Clock::now() - start > *options.timeout) {
        result.timed_out = true;
        terminate_group();
      }
      if (kill_deadline && Clock::now() > *kill_deadline) kill(-pid, SIGKILL);
    }

    pollfd fds[3];
    int nfds = 0;
    if (out_fd >= 0) fds[nfds++] = {out_fd, POLLIN, 0};
    if (err_fd >= 0) fds[nfds++] = {err_fd, POLLIN, 0};
    if (in_fd >= 0) fds[nfds++] = {in_fd, POLLOUT, 0};
    if (nfds == 0) {
      if (!exited) usleep(20000);
      continue;
    }
    int rc = poll(fds, nfds, 50);
    if (rc < 0 && errno != EINTR) break;
    for (int i = 0; i < nfds; ++i) {
      if (!fds[i].revents) continue;
      int fd = fds[i].fd;
      if (fd == in_fd) {
        if (fds[i].revents & (POLLERR | POLLHUP)) { close(in_fd); in_fd = -1; continue; }
        ssize_t w = write(in_fd, options.stdin_data.data() + stdin_written,
                          options.stdin_data.size() - stdin_written);
        if (w > 0) stdin_written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) { close(in_fd); in_fd = -1; continue; }
        if (stdin_written == options.stdin_data.size()) { close(in_fd); in_fd = -1; }
        continue;
      }
      ssize_t r = read(fd, buf, sizeof buf);
      if (r > 0) {
        std::string_view chunk(buf, static_cast<size_t>(r));
        if (fd == out_fd) {
          out_buf.Append(chunk);
          if (options.on_output) options.on_output(chunk);
        } else {
          err_buf.Append(chunk);
        }
        if (tee.is_open()) tee.write(chunk.data(), static_cast<std::streamsize>(chunk.size())).flush();
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(fd);
        if (fd == out_fd) out_fd = -1; else err_fd = -1;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  if (out_fd >= 0) close(out_fd);
  if (err_fd >= 0) close(err_fd);
  if (!exited) waitpid(pid, &wait_status, 0);

  result.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(wait_status)) result.exit_code = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) result.signal = WTERMSIG(wait_status);
  result.truncated = out_buf.truncated() || err_buf.truncated();
  result.out = out_buf.Take();
  result.err = err_buf.Take();
  return result;
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    bool safe = !arg.empty();
    for (char c : arg) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%_-+=:,./", c))) { safe = false; break; }
    }
    if (safe) { out += arg; continue; }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') out += "'\\''"; else out += c;
    }
    out += '\'';
  }
  return out;
}

std::string LastLines(std::string_view text, size_t max_lines, size_t max_bytes) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t start = text.size();
  for (size_t lines = 0; lines < max_lines && start > 0; ++lines) {
    size_t nl = text.rfind('\n', start - 1);
    start = nl == std::string_view::npos ? 0 : nl;
    if (nl == std::string_view::npos) break;
  }
  std::string_view tail = text.substr(start);
  if (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  if (tail.size() > max_bytes) tail = tail.substr(tail.size() - max_bytes);
  return std::string(tail);
}

Status CommandFailure(std::string what, const std::vector<std::string>& argv, const ProcessResult& result) {
  ErrorKind kind = result.cancelled ? ErrorKind::kCancelled
                   : result.timed_out ? ErrorKind::kDeadlineExceeded
                                      : ErrorKind::kUnavailable;
  Status s(kind, what + " failed: " + result.Describe());
  s.WithEvidence("command", ShellQuote(argv));
  s.WithEvidence("exit_status", result.Describe());
  if (!result.err.empty()) s.WithEvidence("stderr (last lines)", LastLines(result.err));
  if (!result.out.empty()) s.WithEvidence("stdout (last lines)", LastLines(result.out));
  return s;
}

Status ProcessFailure(std::string what, const ProcessOptions& options, const ProcessResult& result) {
  return CommandFailure(std::move(what), options.argv, result)
      .WithEvidence("cwd", options.cwd.empty() ? std::filesystem::current_path().string() : options.cwd.string());
}

}  // namespace parity
