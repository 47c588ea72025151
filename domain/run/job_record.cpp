#include "domain/run/job_record.h"
#include "support/file_read.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace parity::run {

namespace fs = std::filesystem;

fs::path JobsDir(const fs::path& report_dir) { return report_dir / "jobs"; }
fs::path JobDir(const fs::path& report_dir, const std::string& id) { return JobsDir(report_dir) / id; }

Status WriteFileAtomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("cannot write " + tmp.string() + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      return Unavailable("cannot write " + tmp.string() + ": " + err);
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  return Status::Ok();
}

Result<json> LoadJob(const fs::path& report_dir, const std::string& id) {
  if (id.empty() || id.find('/') != std::string::npos || id == "." || id == "..") {
    return InvalidArgument("arguments.job_id: not a job id: \"" + id + "\"");
  }
  fs::path file = JobDir(report_dir, id) / "job.json";
  auto text = ReadFilePrefix(file, 4u << 20);
  if (!text.ok()) {
    return NotFound("no job " + id + " in " + JobsDir(report_dir).string())
        .WithHint("list the jobs with action \"list\"; jobs live in the report directory they were started with");
  }
  json job = json::parse(*text, nullptr, false);
  if (!job.is_object() || job.value("schema", "") != kJobSchema) {
    return Internal("job record " + file.string() + " is not a " + std::string(kJobSchema) + " object");
  }
  return job;
}

Status SaveJob(const fs::path& report_dir, const json& job) {
  fs::path dir = JobDir(report_dir, job.at("id").get<std::string>());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("cannot create " + dir.string() + ": " + ec.message());
  return WriteFileAtomic(dir / "job.json", job.dump(2) + "\n");
}

std::vector<std::string> JobIds(const fs::path& report_dir) {
  std::vector<std::pair<std::string, std::string>> found;  // (started, id)
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(JobsDir(report_dir), ec)) {
    if (!fs::exists(entry.path() / "job.json")) continue;
    std::string id = entry.path().filename().string();
    auto job = LoadJob(report_dir, id);
    found.emplace_back(job.ok() ? job->value("started", "") : "", id);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> ids;
  for (auto& [started, id] : found) ids.push_back(id);
  return ids;
}

Result<JobLock> JobLock::Acquire(const fs::path& job_dir) {
  fs::path file = job_dir / "lock";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("cannot open " + file.string() + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      std::string err = std::strerror(errno);
      ::close(fd);
      return Unavailable("cannot lock " + file.string() + ": " + err);
    }
  }
  return JobLock(fd);
}

JobLock::~JobLock() {
  if (fd_ >= 0) ::close(fd_);
}

json ToJson(const SshTarget& t) {
  json j = {{"host", t.host}, {"user", t.user}, {"port", t.port}, {"connect_timeout_s", t.connect_timeout_s}};
  if (t.identity_file) j["identity_file"] = t.identity_file->string();
  if (t.password_env) j["password_env"] = *t.password_env;
  if (t.known_hosts) j["known_hosts"] = t.known_hosts->string();
  return j;
}

Result<std::optional<SshTarget>> SshTargetOf(const json& job) {
  if (!job.contains("ssh") || job["ssh"].is_null()) return std::optional<SshTarget>();
  const json& s = job["ssh"];
  SshTarget t;
  t.host = s.value("host", "");
  t.user = s.value("user", "");
  t.port = s.value("port", 22);
  t.connect_timeout_s = s.value("connect_timeout_s", 15);
  if (s.contains("identity_file")) t.identity_file = s["identity_file"].get<std::string>();
  if (s.contains("password_env")) t.password_env = s["password_env"].get<std::string>();
  if (s.contains("known_hosts")) t.known_hosts = s["known_hosts"].get<std::string>();
  if (t.host.empty()) return Internal("job record has an ssh block without a host");
  return std::optional<SshTarget>(t);
}

}  // namespace parity::run
