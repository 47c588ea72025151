// What the job code and its executors share about a job on its executing host: where its
// directory and log are there (the report directory locally; remote_dir on an SSH host),
// and one checked helper-command runner.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "support/status.h"

namespace parity::run {

// What one status call returns of a remote log at most (the caller asks again for more).
inline constexpr size_t kRemoteLogChunk = 4u << 20;

// The job ran on an SSH host (its record has an ssh block).
bool IsRemoteJob(const nlohmann::json& job);
// The host parity's commands for a job run on (Host::Describe()): the record's host, or
// for a Slurm job the host it was submitted from ("host" then names the Slurm job).
std::string CommandHostOf(const nlohmann::json& job);
// The job directory on the executing host.
std::string HostJobDir(const std::filesystem::path& report_dir, const nlohmann::json& job);
// The log as the host's scripts take it: absolute locally, relative to the job dir remotely.
std::string HostLogArg(const std::filesystem::path& report_dir, const nlohmann::json& job);

// Runs a short helper command on the host; a non-zero exit is an error with evidence.
Result<ProcessResult> RunChecked(Host& host, const std::string& what, const std::vector<std::string>& argv,
                                 int timeout_s = 60);

// What a status script printed: "key=value" lines up to a "@@log" line, then log bytes.
struct StatusOutput {
  std::map<std::string, std::string> values;
  std::string log;
};
// Runs a status script (kStatus, the Slurm one) on the host; an error names `what` (the
// job) when it fails or stops before its "@@log" line.
Result<StatusOutput> RunStatusScript(Host& host, const std::vector<std::string>& argv, const std::string& what);

}  // namespace parity::run
