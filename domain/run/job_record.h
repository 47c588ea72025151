// A job's record on the local disk: `<report_dir>/jobs/<id>/job.json` (what was started,
// where, how, and once known how it ended). It is the only state a job has on parity's
// side, so a restarted server (or another `parity call`) picks a job up from it. Writes are
// atomic (temp + rename); JobLock serialises pollers and finalisers of one job across
// processes (flock).
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
// Ids of every job under report_dir, oldest first.
std::vector<std::string> JobIds(const std::filesystem::path& report_dir);

// Atomic write of a whole file (temp, fsync, rename).
Status WriteFileAtomic(const std::filesystem::path& path, const std::string& text);

class JobLock {
 public:
  static Result<JobLock> Acquire(const std::filesystem::path& job_dir);
  JobLock(JobLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  JobLock(const JobLock&) = delete;
  ~JobLock();

 private:
  explicit JobLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

json ToJson(const SshTarget& target);
Result<std::optional<SshTarget>> SshTargetOf(const json& job);

}  // namespace parity::run
