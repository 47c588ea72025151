// A job's record on the local disk: `<report_dir>/jobs/<id>/job.json` (what was started,
// where, how, and once known how it ended). It is the only state a job has on parity's
// side, so a restarted server (or another `parity call`) picks a job up from it. Writes are
// atomic (temp + rename, support/safe_file.h: no symlink followed, mode 0600); JobLock
// serialises pollers and finalisers of one job across processes (flock).
//
// A record is data, not an instruction: the report directory may sit in a repository that
// shipped a crafted jobs/ folder. LoadJob checks every field parity acts on (ValidateJob)
// and refuses a record that names a log outside the report directory, a checkpoint to move
// from outside the job's working folder, or a remote folder outside the job root. Which
// host a job is polled on, and which process may be signalled, are never taken from it
// (jobs.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "support/status.h"

namespace parity::run {

using json = nlohmann::json;

inline constexpr const char* kJobSchema = "parity.job/1";

std::filesystem::path JobsDir(const std::filesystem::path& report_dir);
std::filesystem::path JobDir(const std::filesystem::path& report_dir, const std::string& id);

Result<json> LoadJob(const std::filesystem::path& report_dir, const std::string& id);
Status SaveJob(const std::filesystem::path& report_dir, const json& job);
// Makes jobs/<id>/, which must not exist yet (nothing planted in it beforehand).
Status CreateJobDir(const std::filesystem::path& report_dir, const std::string& id);
// Ids of every job under report_dir, oldest first.
std::vector<std::string> JobIds(const std::filesystem::path& report_dir);

// FailedPrecondition naming the first field of `job` that parity would not act on.
Status ValidateJob(const json& job, const std::string& id);

class JobLock {
 public:
  static Result<JobLock> Acquire(const std::filesystem::path& report_dir, const std::string& id);
  JobLock(JobLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  JobLock(const JobLock&) = delete;
  ~JobLock();

 private:
  explicit JobLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

json ToJson(const SshTarget& target);

}  // namespace parity::run
