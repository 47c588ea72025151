#include "domain/run/job_record.h"
#include "support/json_document.h"
#include "support/json_reader.h"
#include "support/safe_file.h"

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

namespace {

bool IsJobId(const std::string& id) {
  return !id.empty() && id.size() < 256 && id[0] != '.' &&
         id.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-") == std::string::npos;
}

bool HasDotDot(const fs::path& p) {
  for (const auto& part : p) {
    if (part == "..") return true;
  }
  return false;
}

fs::path RecordFile(const std::string& id) { return fs::path("jobs") / id / "job.json"; }

}  // namespace

Status ValidateJob(const json& job, const std::string& id) {
  auto bad = [&](const std::string& why) {
    return FailedPrecondition("job record " + RecordFile(id).string() + " is not one parity would act on: " + why)
        .WithHint("parity did not write it as it is (a cloned repository or another tool may have); look at it and "
                  "remove the job folder by hand");
  };
  auto is_string = [&](const char* key) { return job.contains(key) && job[key].is_string(); };
  if (!job.is_object() || StringOrEmpty(job, "schema") != kJobSchema) return bad("not a " + std::string(kJobSchema) + " object");
  if (StringOrEmpty(job, "id") != id) return bad("its id is not its folder's name");
  if (!is_string("log") || !IsJobId(job["log"].get<std::string>())) {
    return bad("\"log\" must be a file name in the report directory");
  }
  if (!is_string("host")) return bad("no host");
  // The fields read back as text or numbers later: of that type when present, so no reader
  // of a validated record meets a value of another type.
  for (const char* key : {"tool", "phase", "config", "launcher", "started", "executor", "ledger_entry", "remote_dir"}) {
    if (job.contains(key) && !job[key].is_string()) return bad("\"" + std::string(key) + "\" is not a string");
  }
  if (job.contains("side") && !job["side"].is_null() && !job["side"].is_string()) return bad("\"side\" is not a string");
  if (job.contains("notes")) {
    if (!job["notes"].is_array()) return bad("\"notes\" is not a list");
    for (const auto& n : job["notes"]) {
      if (!n.is_string()) return bad("a note that is not a string");
    }
  }
  for (const char* key : {"started_unix", "timeout_s"}) {
    if (job.contains(key) && !job[key].is_number()) return bad("\"" + std::string(key) + "\" is not a number");
  }
  const json& command = job.value("command", json());
  if (!command.is_object() || !command.value("argv", json()).is_array() || !command.value("cwd", json()).is_string() ||
      !command.value("env", json::object()).is_object()) {
    return bad("no command {argv, cwd, env}");
  }
  for (const auto& a : command["argv"]) {
    if (!a.is_string()) return bad("a command argument that is not a string");
  }
  const json env = command.value("env", json::object());
  for (const auto& [k, v] : env.items()) {
    if (!v.is_string()) return bad("the variable " + k + " is not a string");
  }
  const json& move = job.value("checkpoint_to_move", json());
  if (!move.is_null()) {
    if (!move.is_string() || !IsPlainRelative(move.get<std::string>())) {
      return bad("\"checkpoint_to_move\" must be a path inside the job's working folder");
    }
    if (!job.value("command", json()).value("cwd", json()).is_string() || command["cwd"].get<std::string>().empty() ||
        command["cwd"].get<std::string>()[0] != '/') {
      return bad("the working folder is not an absolute path");
    }
  }
  const json& ckpt = job.value("checkpoint_dir", json(""));
  if (!ckpt.is_string() || (!ckpt.get<std::string>().empty() &&
                            (ckpt.get<std::string>()[0] != '/' || HasDotDot(ckpt.get<std::string>())))) {
    return bad("\"checkpoint_dir\" must be empty or an absolute path without \"..\"");
  }
  const json& ssh = job.value("ssh", json());
  if (!ssh.is_null()) {
    if (!ssh.is_object() || !ssh.value("host", json()).is_string()) return bad("an ssh block without a host");
    std::string dir = StringOrEmpty(job, "remote_dir");
    std::string tail = "/" + id;
    if (dir.size() <= tail.size() || dir.compare(dir.size() - tail.size(), tail.size(), tail) != 0 || HasDotDot(dir)) {
      return bad("\"remote_dir\" must be <remote job root>/" + id);
    }
  }
  if (job.contains("slurm")) {
    const json& slurm = job["slurm"];
    if (!slurm.is_object() || !slurm.contains("job_id") || !slurm["job_id"].is_string()) {
      return bad("a slurm block without a job id");
    }
    for (const char* key : {"submit_host", "batch_script"}) {
      if (slurm.contains(key) && !slurm[key].is_string()) return bad("slurm." + std::string(key) + " is not a string");
    }
    if (slurm.contains("poll_interval_s") && !slurm["poll_interval_s"].is_number()) return bad("slurm.poll_interval_s is not a number");
  }
  if (job.contains("supervisor_pid") && !job["supervisor_pid"].is_number_integer()) return bad("a supervisor pid that is not a number");
  if (job.contains("nonce") && !job["nonce"].is_string()) return bad("a nonce that is not a string");
  if (job.contains("final") && !job["final"].is_object()) return bad("\"final\" is not an object");
  if (!job.value("expected_steps", json()).is_null() && !job["expected_steps"].is_number_integer()) {
    return bad("\"expected_steps\" is not a number");
  }
  return Status::Ok();
}

Result<json> LoadJob(const fs::path& report_dir, const std::string& id) {
  if (!IsJobId(id)) return InvalidArgument("arguments.job_id: not a job id: \"" + id + "\"");
  auto text = ReadFileUnder(report_dir, RecordFile(id), 4u << 20);
  if (!text.ok()) {
    if (text.status().kind() != ErrorKind::kNotFound) return std::move(text).take_status();
    return NotFound("no job " + id + " in " + JobsDir(report_dir).string())
        .WithHint("list the jobs with action \"list\"; jobs live in the report directory they were started with");
  }
  PARITY_ASSIGN_OR_RETURN(json job, ParseJsonDocument(*text, "job record " + (report_dir / RecordFile(id)).string()));
  PARITY_RETURN_IF_ERROR(ValidateJob(job, id));
  return job;
}

Status SaveJob(const fs::path& report_dir, const json& job) {
  WriteOptions o;
  o.mode = kRecordMode;
  return WriteFileUnder(report_dir, RecordFile(job.at("id").get<std::string>()), job.dump(2) + "\n", o);
}

Status CreateJobDir(const fs::path& report_dir, const std::string& id) {
  if (!IsJobId(id)) return Internal("not a job id: " + id);
  return MakeFreshDirUnder(report_dir, fs::path("jobs") / id);
}

std::vector<std::string> JobIds(const fs::path& report_dir) {
  std::vector<std::pair<std::string, std::string>> found;  // (started, id)
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(JobsDir(report_dir), ec)) {
    std::string id = entry.path().filename().string();
    if (!IsJobId(id) || !fs::exists(entry.path() / "job.json")) continue;
    auto job = LoadJob(report_dir, id);
    found.emplace_back(job.ok() ? StringOrEmpty(*job, "started") : "", id);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> ids;
  for (auto& [started, id] : found) ids.push_back(id);
  return ids;
}

Result<JobLock> JobLock::Acquire(const fs::path& report_dir, const std::string& id) {
  if (!IsJobId(id)) return InvalidArgument("not a job id: \"" + id + "\"");
  fs::path file = JobDir(report_dir, id) / "lock";
  PARITY_ASSIGN_OR_RETURN(UniqueFd opened, OpenUnder(report_dir, fs::path("jobs") / id / "lock", O_RDWR | O_CREAT, kRecordMode));
  int fd = opened.release();
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

}  // namespace parity::run
