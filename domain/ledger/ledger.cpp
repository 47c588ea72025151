#include "domain/ledger/ledger.h"

#include "support/iso_time.h"
#include "support/json_document.h"
#include "support/redact.h"
#include "support/safe_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

namespace parity::ledger {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kMaxManifestBytes = 256u << 20;

// Holds an exclusive flock on `<report_dir>/manifest.json.lock` for its lifetime.
class ManifestLock {
 public:
  explicit ManifestLock(const fs::path& report_dir) {
    path_ = report_dir / (std::string(kManifestName) + ".lock");
    auto opened = OpenUnder(report_dir, std::string(kManifestName) + ".lock", O_RDWR | O_CREAT, kRecordMode);
    if (!opened.ok()) {
      error_ = opened.status();
      return;
    }
    fd_ = opened->release();
    if (flock(fd_, LOCK_EX) != 0) {
      error_ = Unavailable("cannot lock " + path_.string() + ": " + std::strerror(errno));
      close(fd_);
      fd_ = -1;
    }
  }
  ~ManifestLock() { if (fd_ >= 0) { flock(fd_, LOCK_UN); close(fd_); } }
  ManifestLock(const ManifestLock&) = delete;
  ManifestLock& operator=(const ManifestLock&) = delete;
  bool ok() const { return fd_ >= 0; }
  const Status& error() const { return error_; }

 private:
  fs::path path_;
  Status error_;
  int fd_ = -1;
};

Result<json> Load(const fs::path& report_dir, bool create) {
  fs::path path = report_dir / kManifestName;
  auto text = ReadFileUnder(report_dir, kManifestName, kMaxManifestBytes);
  if (!text.ok()) {
    if (text.status().kind() != ErrorKind::kNotFound) return std::move(text).take_status().Context("reading the ledger");
    if (!create) return NotFound("no ledger at " + path.string()).WithHint("run a parity tool with this report_dir first");
    std::error_code ec;
    fs::path abs = fs::absolute(report_dir, ec);
    return json{{"schema", kSchema}, {"created", NowUtc()}, {"report_dir", abs.string()},
                {"entries", json::array()}};
  }
  auto parsed = ParseJsonDocument(*text, "the ledger " + path.string());
  if (!parsed.ok()) {
    return FailedPrecondition(parsed.status().message()).WithHint("move the file aside (it is kept untouched) and rerun");
  }
  json manifest = std::move(parsed).value();
  if (!manifest.is_object() || !manifest.contains("entries") || !manifest["entries"].is_array()) {
    return FailedPrecondition("the ledger " + path.string() + " is not a valid parity manifest")
        .WithHint("move the file aside (it is kept untouched) and rerun");
  }
  return manifest;
}

Status Store(const fs::path& report_dir, const json& manifest) {
  WriteOptions o;
  o.mode = kRecordMode;
  return WriteFileUnder(report_dir, kManifestName, manifest.dump(2) + "\n", o);
}

Status Prepare(const fs::path& report_dir) {
  return MakeDirsUnder(report_dir, ".").Context("creating the report directory");
}

void MergePatch(json& target, const json& patch) {
  if (!patch.is_object()) { target = patch; return; }
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.value().is_null()) target.erase(it.key());
    else MergePatch(target[it.key()], it.value());
  }
}

}  // namespace

std::string NowUtc() { return NowIsoUtc(); }

json ToJson(const Command& c) {
  RecordedEnv env = RecordEnv(c.env);
  json argv = json::array();
  for (const auto& a : c.argv) argv.push_back(RedactCredentialsInText(a));  // git clone https://tok@...
  json out = {{"argv", argv}, {"cwd", c.cwd}, {"env", env.values}, {"host", c.host}};
  if (!env.unrecorded.empty()) out["env_unrecorded"] = env.unrecorded;
  return out;
}

Result<std::string> Append(const fs::path& report_dir, const Entry& entry) {
  PARITY_RETURN_IF_ERROR(Prepare(report_dir));
  ManifestLock lock(report_dir);
  if (!lock.ok()) return lock.error();
  PARITY_ASSIGN_OR_RETURN(json manifest, Load(report_dir, /*create=*/true));

  size_t next = manifest["entries"].size() + 1;
  char id[16];
  std::snprintf(id, sizeof id, "e%04zu", next);
  json e = {{"id", id}, {"time", NowUtc()}, {"tool", entry.tool}, {"action", entry.action}};
  e["side"] = entry.side ? json(*entry.side) : json(nullptr);
  e["config"] = entry.config ? json(*entry.config) : json(nullptr);
  if (entry.command) e["command"] = ToJson(*entry.command);
  if (!entry.git.is_null()) e["git"] = entry.git;
  if (!entry.inputs.is_null()) e["inputs"] = entry.inputs;
  if (!entry.outputs.is_null()) e["outputs"] = entry.outputs;
  if (!entry.outcome.is_null()) e["outcome"] = entry.outcome;
  if (!entry.environment.is_null()) e["environment"] = entry.environment;
  manifest["entries"].push_back(std::move(e));
  PARITY_RETURN_IF_ERROR(Store(report_dir, manifest));
  return std::string(id);
}

Status Update(const fs::path& report_dir, const std::string& id, const json& merge_patch) {
  ManifestLock lock(report_dir);
  if (!lock.ok()) return lock.error();
  PARITY_ASSIGN_OR_RETURN(json manifest, Load(report_dir, /*create=*/false));
  for (auto& e : manifest["entries"]) {
    if (e.value("id", "") == id) {
      MergePatch(e, merge_patch);
      e["id"] = id;  // the id is not patchable
      return Store(report_dir, manifest);
    }
  }
  return NotFound("no ledger entry " + id + " in " + (report_dir / kManifestName).string());
}

Result<json> Read(const fs::path& report_dir) {
  if (!fs::exists(report_dir / kManifestName)) {
    return NotFound("no ledger at " + (report_dir / kManifestName).string())
        .WithHint("run a parity tool with this report_dir first");
  }
  ManifestLock lock(report_dir);  // a read-only report directory is still read (unlocked)
  return Load(report_dir, /*create=*/false);
}

}  // namespace parity::ledger
