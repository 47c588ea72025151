#include "domain/msprobe/run_compare.h"

#include "support/subprocess.h"

namespace parity::msprobe {

namespace fs = std::filesystem;

namespace {

constexpr const char* kInstallHint =
    "install MindStudio Probe where parity runs (`pip install mindstudio-probe`, which provides the `msprobe` "
    "command), or set msprobe_python to an interpreter that can import msprobe (msprobe_pythonpath may point at a "
    "source copy's python/ folder); or run `msprobe compare` yourself and pass its CSV as compare_result";

// The file msprobe names in "The result file path is: /path/compare_result_....csv."
std::optional<fs::path> ResultFileFromLog(const std::string& log) {
  static constexpr std::string_view kMarker = "The result file path is: ";
  size_t at = log.rfind(kMarker);
  if (at == std::string::npos) return std::nullopt;
  size_t start = at + kMarker.size();
  size_t end = log.find_first_of("\r\n", start);
  std::string path = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!path.empty() && (path.back() == '.' || path.back() == ' ')) path.pop_back();
  if (path.empty()) return std::nullopt;
  return fs::path(path);
}

// The newest compare_result*.csv / .xlsx in `dir` (msprobe versions that do not log the name).
std::optional<fs::path> NewestResult(const fs::path& dir) {
  std::optional<fs::path> best;
  fs::file_time_type best_time{};
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    std::string name = f.path().filename().string();
    std::string ext = f.path().extension().string();
    if (name.rfind("compare_result", 0) != 0 || (ext != ".csv" && ext != ".xlsx")) continue;
    auto time = f.last_write_time(ec);
    if (!best || time > best_time) best = f.path(), best_time = time;
  }
  return best;
}

}  // namespace

Result<MsprobeRunResult> RunMsprobeCompare(const MsprobeRunOptions& options) {
  MsprobeRunResult run;
  ProcessOptions process;
  if (options.python) {
    auto python = FindExecutable(options.python->string());
    if (!python) {
      return NotFound("msprobe_python: no interpreter at " + options.python->string()).WithHint(kInstallHint);
    }
    process.argv = {python->string(), "-m", "msprobe.msprobe"};
  } else {
    auto msprobe = FindExecutable("msprobe");
    if (!msprobe) {
      return FailedPrecondition("msprobe is not installed: there is no `msprobe` command on PATH").WithHint(kInstallHint);
    }
    process.argv = {msprobe->string()};
  }
  fs::path target = fs::absolute(options.target), golden = fs::absolute(options.golden);
  fs::path out = fs::absolute(options.output_dir);
  process.argv.insert(process.argv.end(), {"compare", "-tp", target.string(), "-gp", golden.string(), "-o", out.string()});
  if (options.fuzzy) process.argv.push_back("-fm");
  if (!options.python_path.empty()) {
    process.env_set["PYTHONPATH"] = options.python_path;
    run.env.push_back("PYTHONPATH=" + options.python_path);
  }

  std::error_code ec;
  fs::remove_all(out, ec);  // parity's own folder: no stale compare_result_* is mistaken for this run's
  fs::create_directories(out, ec);
  if (ec) return Unavailable("cannot create " + out.string() + ": " + ec.message());
  run.log_file = out / "msprobe_compare.log";
  process.tee_path = run.log_file;
  process.merge_stderr = true;
  process.cwd = out;
  process.timeout = options.timeout;
  process.cancel = options.cancel;
  run.argv = process.argv;

  PARITY_ASSIGN_OR_RETURN(ProcessResult result, RunProcess(process));
  run.exit_code = result.exit_code;
  run.duration_s = result.duration_s;
  if (result.cancelled) return Cancelled();
  if (options.python && (result.out.find("No module named msprobe") != std::string::npos ||
                         result.out.find("No module named 'msprobe'") != std::string::npos)) {
    return FailedPrecondition("msprobe is not installed for " + options.python->string() +
                              " (python -m msprobe.msprobe: No module named msprobe)")
        .WithHint(kInstallHint)
        .WithEvidence("command", ShellQuote(process.argv))
        .WithEvidence("log_excerpt", LastLines(result.out, 10));
  }
  if (!result.success()) {
    Status failure = ProcessFailure("msprobe compare", process, result);
    failure.WithHint("read " + run.log_file.string() + "; msprobe compares only dumps of the same task and mode");
    return failure;
  }
  std::optional<fs::path> file = ResultFileFromLog(result.out);
  if (!file || !fs::exists(*file, ec)) file = NewestResult(out);
  if (!file) {
    return Unavailable("msprobe compare exited 0 but wrote no compare_result_*.csv in " + out.string())
        .WithEvidence("command", ShellQuote(process.argv))
        .WithEvidence("log_excerpt", LastLines(result.out, 30));
  }
  run.result_file = *file;
  return run;
}

}  // namespace parity::msprobe
