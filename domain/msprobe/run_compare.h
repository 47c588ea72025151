// Running the real `msprobe compare` (MindStudio Probe) when the user asks and it is
// installed: `msprobe` on PATH, or `<python> -m msprobe.msprobe` with a chosen interpreter
// (PYTHONPATH set when given, for a source copy). MSPROBE-NEW's CLI (formats.md §1.e.1):
// `compare -tp <target> -gp <golden> -o <dir> [-fm]`, the candidate as target. Run through
// support/subprocess (argv, timeout, cancellation, log teed to a file); the result file is
// the one msprobe names in its log ("The result file path is: ...").
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/cancel.h"
#include "support/status.h"

namespace parity::msprobe {

struct MsprobeRunOptions {
  std::optional<std::filesystem::path> python;  // run `python -m msprobe.msprobe`; unset: `msprobe` on PATH
  std::string python_path;                      // PYTHONPATH for the child; empty: inherited
  std::filesystem::path target, golden;         // candidate / baseline: dump.json files or step folders
  std::filesystem::path output_dir;             // emptied, then msprobe writes its result there
  bool fuzzy = false;                           // -fm
  std::chrono::seconds timeout{1800};
  CancellationToken cancel;
};

struct MsprobeRunResult {
  std::vector<std::string> argv;
  std::vector<std::string> env;       // "PYTHONPATH=..." when set
  int exit_code = 0;
  double duration_s = 0;
  std::filesystem::path result_file;  // compare_result_*.csv (or .xlsx)
  std::filesystem::path log_file;     // everything msprobe printed
};

// Runs the compare. Errors: msprobe not installed (says how to install it or point at
// it), the run failed or timed out (command, exit status, log excerpt), no result file.
Result<MsprobeRunResult> RunMsprobeCompare(const MsprobeRunOptions& options);

}  // namespace parity::msprobe
