#include "domain/run/job_host.h"

#include <sstream>

#include "domain/run/job_record.h"

namespace parity::run {

bool IsRemoteJob(const nlohmann::json& job) { return job.contains("ssh") && !job["ssh"].is_null(); }

std::string CommandHostOf(const nlohmann::json& job) {
  if (job.contains("slurm") && job["slurm"].is_object() && job["slurm"].contains("submit_host") &&
      job["slurm"]["submit_host"].is_string()) {
    return job["slurm"]["submit_host"].get<std::string>();
  }
  return job.contains("host") && job["host"].is_string() ? job["host"].get<std::string>() : "";
}

std::string HostJobDir(const std::filesystem::path& report_dir, const nlohmann::json& job) {
  return IsRemoteJob(job) ? job["remote_dir"].get<std::string>() : JobDir(report_dir, job["id"]).string();
}

std::string HostLogArg(const std::filesystem::path& report_dir, const nlohmann::json& job) {
  return IsRemoteJob(job) ? "train.log" : (report_dir / job["log"].get<std::string>()).string();
}

Result<ProcessResult> RunChecked(Host& host, const std::string& what, const std::vector<std::string>& argv,
                                 int timeout_s) {
  ExecOptions o;
  o.timeout = std::chrono::seconds(timeout_s);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, host.Exec(argv, o));
  if (!r.success()) {
    return Unavailable(what + " on " + host.Describe() + " failed: " + r.Describe())
        .WithEvidence("command", ShellQuote(argv))
        .WithEvidence("output", LastLines(r.out + r.err));
  }
  return r;
}

Result<StatusOutput> RunStatusScript(Host& host, const std::vector<std::string>& argv, const std::string& what) {
  ExecOptions o;
  o.timeout = std::chrono::seconds(60);
  o.output_cap = kRemoteLogChunk + 65536;
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, host.Exec(argv, o));
  size_t marker = r.out.find("@@log\n");
  if (!r.success() || marker == std::string::npos) {
    return Unavailable("cannot read the state of " + what + " on " + host.Describe() + ": " + r.Describe())
        .WithEvidence("output", LastLines(r.out + r.err));
  }
  StatusOutput s;
  std::istringstream in(r.out.substr(0, marker));
  std::string line;
  while (std::getline(in, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) s.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  s.log = r.out.substr(marker + 6);
  return s;
}

}  // namespace parity::run
