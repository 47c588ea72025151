// Running a child process: argv (never a shell string), working directory, environment
// changes, a timeout, an output cap, cooperative cancellation, streaming of the output as
// it arrives, and an optional tee file. The child leads its own process group, and on
// timeout or cancellation the whole group is terminated (SIGTERM, then SIGKILL).
// RunProcess returns an error only when the process could not be started; a non-zero exit
// is a ProcessResult for the caller to judge (ProcessFailure turns it into a Status with
// the evidence the user needs: the command, the exit status and the last lines printed).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace parity {

struct ProcessOptions {
  std::vector<std::string> argv;             // argv[0] is looked up on PATH when it has no '/'
  std::filesystem::path cwd;                 // empty: inherit
  std::map<std::string, std::string> env_set;
  std::vector<std::string> env_unset;
  std::optional<std::chrono::milliseconds> timeout;
  size_t output_cap = size_t{16} << 20;      // per stream; beyond it the middle is dropped
  CancellationToken cancel;
  std::string stdin_data;                    // written then closed; empty: /dev/null
  bool merge_stderr = false;                 // stderr into `out`, in order
  // Called with each chunk of output as it arrives (stdout, or both when merged), from the
  // calling thread. Keep it cheap.
  std::function<void(std::string_view chunk)> on_output;
  std::filesystem::path tee_path;            // also appends all output there
};

struct ProcessResult {
  int exit_code = -1;      // valid when signal == 0
  int signal = 0;          // the signal that ended the process, 0 if it exited
  bool timed_out = false;
  bool cancelled = false;
  std::string out, err;
  bool truncated = false;  // some output was dropped because of output_cap
  double duration_s = 0;

  bool success() const { return signal == 0 && exit_code == 0 && !timed_out && !cancelled; }
  // "exit code 1", "killed by signal 9 (SIGKILL)", "timed out after 30 s", "cancelled".
  std::string Describe() const;
};

Result<ProcessResult> RunProcess(const ProcessOptions& options);

// argv as a copy-pasteable POSIX shell command line.
std::string ShellQuote(const std::vector<std::string>& argv);

// A Status describing a failed run: "<what> failed: exit code 2", with evidence
// command, cwd, exit status and the last lines of stderr/stdout.
Status ProcessFailure(std::string what, const ProcessOptions& options, const ProcessResult& result);
// The same for a command run elsewhere (over SSH): no working directory of ours to name.
Status CommandFailure(std::string what, const std::vector<std::string>& argv, const ProcessResult& result);

// The last `max_lines` lines of `text` (at most `max_bytes`), for evidence.
std::string LastLines(std::string_view text, size_t max_lines = 30, size_t max_bytes = 4096);

// The absolute path of an executable found on PATH (or `name` itself when it has a '/').
std::optional<std::filesystem::path> FindExecutable(std::string_view name);

}  // namespace parity
