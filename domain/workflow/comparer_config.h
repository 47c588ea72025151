// PrecisionComparer's config.json, read as-is (the user's existing files keep working):
// baseline / test sides (local or SSH), msprobe data folders, debug options. Decoding errors
// name the JSON path ("config.json: test.mode: expected one of local, remote"). The SSH
// password is kept only in memory and never printed (see Redacted()).
//
// parity's additions (optional, so a PrecisionComparer file works unchanged): a side's
// `ref` (the commit, branch or tag of code_path that side runs; default the code_path's
// HEAD), which lets both sides be branches of one repository. A relative code_path is
// taken from the config file's folder (a remote side's must be absolute). In `ssh`:
// identity_file, known_hosts (default ~/.ssh/known_hosts) and password_env (the NAME of an
// environment variable holding the password). PrecisionComparer's literal `password` is
// accepted from this file, the user's own, but is handed to libssh only through an
// environment variable of parity's own process; it never appears in output, ledger or argv.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

struct ComparerSsh {
  std::string host;
  std::string username;
  int port = 22;
  std::optional<std::string> password;
  std::optional<std::string> identity_file, known_hosts, password_env;  // parity's additions
};

struct ComparerSide {
  std::string mode = "local";  // local | remote
  std::string log_path;
  // parity: the JSON lines (one object per step: step, loss, grad_norm) the trainer writes
  // itself, at full precision; set on both sides, it is what the runs are compared on (the
  // run's output, or log_path, still gives the probes' lines). Placed like log_path.
  std::string metrics_file;
  std::string code_path;
  std::string run_script;
  std::optional<std::string> ref;  // parity: commit/branch of code_path (default its HEAD)
  // parity: "slurm" runs the side's trainings as sbatch jobs (from this machine, or from the
  // SSH host of a remote side) with the user's Slurm settings (domain/run/slurm.h).
  std::string executor = "default";
  std::optional<ComparerSsh> ssh;  // required for remote
};

struct ComparerConfig {
  std::string name = "config";  // how errors name the file ("config.json")
  ComparerSide baseline, test;
  std::string baseline_data_dir, test_data_dir;
  // A path fragment marking the user's model code in msprobe's stacks ("/PanGu/"): with it,
  // only frames whose path holds it count as user code (not MindSpeed, Megatron, ...).
  std::string parse_code_dir;
  // Where a copy of the msprobe-layout compare table is written (compare_result_rank<N>_
  // <timestamp>.csv, as msprobe names it); relative: from the config file's folder.
  std::string compare_output_dir;
  int max_iterations = 10;
  double tolerance = 0.001;
  std::vector<std::string> log_keywords;
  // The probes' tolerance: the first probe whose sum/mean/min/max/norm differ by more than
  // this (absolute) is followed; 0: bitwise. Differences within it are reported.
  double trace_threshold = 0.001;
};

Result<ComparerConfig> ParseComparerConfig(const nlohmann::json& value, const std::string& name);
Result<ComparerConfig> ReadComparerConfig(const std::filesystem::path& path);

// The config as JSON with the SSH passwords replaced by "***".
nlohmann::json Redacted(const ComparerConfig& config);

}  // namespace parity::workflow
