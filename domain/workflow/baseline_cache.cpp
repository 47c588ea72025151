#include "domain/workflow/baseline_cache.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>

#include "domain/ledger/ledger.h"
#include "domain/logs/sha256.h"
#include "support/file_read.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kEntrySchema = "parity.baseline-cache/1";
constexpr uint64_t kMaxEntryJson = 64u << 20;

uint64_t FolderBytes(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

Status WriteFile(const fs::path& path, const std::string& content) { return WriteFileAtomic(path, content); }

Result<json> ReadEntryJson(const fs::path& dir) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(dir / "entry.json", kMaxEntryJson));
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || j.value("schema", "") != kEntrySchema) {
    return FailedPrecondition((dir / "entry.json").string() + " is not a parity baseline cache entry");
  }
  return j;
}

CacheEntry EntryFrom(const json& j, const fs::path& dir) {
  CacheEntry e;
  e.key = j.value("key", "");
  e.material = j.value("material", json::object());
  e.dir = dir;
  e.created = j.value("created", "");
  e.last_used = j.value("last_used", e.created);
  e.bytes = j.value("bytes", uint64_t{0});
  for (const auto& r : j.value("runs", json::array())) {
    CachedRun run;
    run.log = dir / r.value("log", "");
    run.log_sha256 = r.value("log_sha256", "");
    if (!r.value("events", "").empty()) run.events = dir / r.value("events", "");
    run.events_sha256 = r.value("events_sha256", "");
    run.ledger_entry = r.value("ledger_entry", json::object());
    run.report_dir = r.value("report_dir", "");
    run.worktree = r.value("worktree", "");
    e.runs.push_back(std::move(run));
  }
  return e;
}

std::string RandomSuffix() {
  std::random_device rd;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
  return buf;
}

}  // namespace

Result<std::string> FileSha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path.string());
  logs::Sha256 hash;
  std::string buf(1 << 20, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    hash.Update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return Unavailable("reading " + path.string() + " failed");
  return hash.HexDigest();
}

Result<fs::path> BaselineCache::DefaultRoot() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "parity";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "parity";
  return FailedPrecondition("neither XDG_CACHE_HOME nor HOME is set, so there is no cache folder")
      .WithHint("set XDG_CACHE_HOME, or run with --no-cache");
}

std::string BaselineCache::KeyOf(const json& material) {
  logs::Sha256 hash;
  hash.Update(material.dump());  // nlohmann's objects are key-sorted: a canonical text
  return hash.HexDigest();
}

Result<std::optional<CacheEntry>> BaselineCache::Lookup(const std::string& key) {
  const fs::path dir = EntriesDir() / key;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::optional<CacheEntry>();
  auto j = ReadEntryJson(dir);
  auto unusable = [&](const std::string& why) -> Status {
    fs::remove_all(dir, ec);
    return FailedPrecondition("the cached baseline " + key.substr(0, 16) + " is unusable and was removed: " + why);
  };
  if (!j.ok()) return unusable(j.status().message());
  CacheEntry entry = EntryFrom(*j, dir);
  if (entry.key != key || entry.runs.empty()) return unusable("entry.json names another key or no run");
  for (const auto& run : entry.runs) {
    for (const auto& [file, want] : {std::pair{run.log, run.log_sha256}, std::pair{run.events, run.events_sha256}}) {
      if (file.empty()) continue;
      auto got = FileSha256(file);
      if (!got.ok()) return unusable(got.status().message());
      if (*got != want) {
        return unusable(file.string() + " has sha256 " + *got + ", but " + want + " was stored");
      }
    }
  }
  entry.last_used = ledger::NowUtc();
  (*j)["last_used"] = entry.last_used;
  PARITY_RETURN_IF_ERROR(WriteFile(dir / "entry.json.tmp", j->dump(2) + "\n"));
  fs::rename(dir / "entry.json.tmp", dir / "entry.json", ec);
  return std::optional<CacheEntry>(std::move(entry));
}

Result<std::vector<std::string>> BaselineCache::Store(const std::string& key, const json& material,
                                                      const std::vector<CachedRun>& runs) {
  std::error_code ec;
  fs::create_directories(EntriesDir(), ec);
  if (ec) return Unavailable("cannot create the cache folder " + EntriesDir().string() + ": " + ec.message());
  const fs::path tmp = EntriesDir() / (".tmp-" + key.substr(0, 16) + "-" + RandomSuffix());
  fs::create_directories(tmp, ec);
  if (ec) return Unavailable("cannot create " + tmp.string() + ": " + ec.message());
  auto fail = [&](Status s) {
    fs::remove_all(tmp, ec);
    return s;
  };
  json stored = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    const CachedRun& run = runs[i];
    const std::string sub = "run" + std::to_string(i + 1);
    fs::create_directories(tmp / sub, ec);
    json r = {{"ledger_entry", run.ledger_entry}, {"report_dir", run.report_dir}, {"worktree", run.worktree}};
    for (const auto& [from, name, hash_key] :
         {std::tuple{run.log, "log", "log_sha256"}, std::tuple{run.events, "events", "events_sha256"}}) {
      if (from.empty()) {
        r[name] = "";
        r[hash_key] = "";
        continue;
      }
      const fs::path to = tmp / sub / from.filename();
      Status copied = CopyFileUnder(from, tmp, to.lexically_relative(tmp));
      if (!copied.ok()) return fail(std::move(copied).Context("copying " + from.string() + " into the cache"));
      auto hash = FileSha256(to);
      if (!hash.ok()) return fail(hash.status());
      r[name] = (fs::path(sub) / from.filename()).string();
      r[hash_key] = *hash;
    }
    stored.push_back(std::move(r));
  }
  const uint64_t bytes = FolderBytes(tmp);
  if (bytes > max_bytes_) {
    return fail(FailedPrecondition("the baseline's runs take " + std::to_string(bytes) + " bytes, more than the cache's "
                                   "bound of " + std::to_string(max_bytes_) + " bytes: not cached")
                    .WithHint("raise cache.max_bytes in premerge.json"));
  }
  const std::string now = ledger::NowUtc();
  json entry = {{"schema", kEntrySchema}, {"key", key},        {"material", material}, {"created", now},
                {"last_used", now},       {"bytes", bytes},    {"runs", stored}};
  Status written = WriteFile(tmp / "entry.json", entry.dump(2) + "\n");
  if (!written.ok()) return fail(std::move(written));
  const fs::path dir = EntriesDir() / key;
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) return fail(Unavailable("cannot move " + tmp.string() + " to " + dir.string() + ": " + ec.message()));
  return Evict(key);
}

Result<std::vector<std::string>> BaselineCache::Evict(const std::string& keep) {
  PARITY_ASSIGN_OR_RETURN(std::vector<CacheEntry> entries, List());
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  std::vector<std::string> evicted;
  std::error_code ec;
  // List() is most recently used first: remove from the back.
  for (auto it = entries.rbegin(); it != entries.rend() && total > max_bytes_; ++it) {
    if (it->key == keep) continue;
    fs::remove_all(it->dir, ec);
    if (ec) return Unavailable("cannot remove the cached baseline " + it->dir.string() + ": " + ec.message());
    total -= it->bytes;
    evicted.push_back(it->key);
  }
  return evicted;
}

Result<std::vector<CacheEntry>> BaselineCache::List() const {
  std::vector<CacheEntry> out;
  std::error_code ec;
  if (!fs::is_directory(EntriesDir(), ec)) return out;
  for (fs::directory_iterator it(EntriesDir(), ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory() || it->path().filename().string().rfind(".tmp-", 0) == 0) continue;
    auto j = ReadEntryJson(it->path());
    if (!j.ok()) continue;  // not ours, or being written
    out.push_back(EntryFrom(*j, it->path()));
  }
  if (ec) return Unavailable("cannot list " + EntriesDir().string() + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used != b.last_used ? a.last_used > b.last_used : a.key < b.key;
  });
  return out;
}

Result<std::pair<size_t, uint64_t>> BaselineCache::Clear() {
  PARITY_ASSIGN_OR_RETURN(std::vector<CacheEntry> entries, List());
  std::pair<size_t, uint64_t> removed{0, 0};
  std::error_code ec;
  for (const auto& e : entries) {
    fs::remove_all(e.dir, ec);
    if (ec) return Unavailable("cannot remove " + e.dir.string() + ": " + ec.message());
    ++removed.first;
    removed.second += e.bytes;
  }
  return removed;
}

}  // namespace parity::workflow
