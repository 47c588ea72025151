// The baseline cache: the runs of one baseline, keyed by everything that determines their
// numbers, so a later premerge against the same baseline reuses them instead of training
// again. The key (KeyOf) is the sha256 of a canonical JSON of: the baseline commit's tree id,
// the class-B files' contents, the run_training arguments with the report directory and
// worktree paths normalised away, the initial checkpoint's content hash, the environment
// fingerprint, steps and seed (premerge_baseline.cpp assembles it).
//
// Layout: <root>/baselines/<key>/entry.json + run<N>/<log> + run<N>/<events file>, where
// root is ${XDG_CACHE_HOME:-$HOME/.cache}/parity. Every stored file's sha256 is in
// entry.json and is checked on reuse: a mismatch makes the entry unusable (it is removed
// and the error says which file). The folder is bounded: after a store, the least recently
// used entries are removed until the total is within max_bytes. Writes go to a temporary
// folder renamed into place, so a reader never sees half an entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

inline constexpr uint64_t kDefaultCacheMaxBytes = uint64_t{4} << 30;  // 4 GiB

// One run as it is stored or reused.
struct CachedRun {
  std::filesystem::path log;      // absolute: in the report directory (store) or the cache (reuse)
  std::string log_sha256;
  std::filesystem::path events;   // TensorBoard event file; empty when the run wrote none
  std::string events_sha256;
  nlohmann::json ledger_entry;    // the run's run_training ledger entry as first recorded
  std::string report_dir;         // where it was recorded then (for rewriting its paths)
  std::string worktree;
};

struct CacheEntry {
  std::string key;
  nlohmann::json material;        // what the key was made of
  std::filesystem::path dir;
  std::string created, last_used;
  uint64_t bytes = 0;
  std::vector<CachedRun> runs;
};

class BaselineCache {
 public:
  // ${XDG_CACHE_HOME:-$HOME/.cache}/parity; an error when neither variable is set.
  static Result<std::filesystem::path> DefaultRoot();
  static std::string KeyOf(const nlohmann::json& material);

  explicit BaselineCache(std::filesystem::path root, uint64_t max_bytes = kDefaultCacheMaxBytes)
      : root_(std::move(root)), max_bytes_(max_bytes) {}
  const std::filesystem::path& root() const { return root_; }

  // The entry, with every file checked against its hash (and last_used updated); nullopt
  // when there is none. FailedPrecondition when a file is missing or its bytes changed:
  // the entry is removed first.
  Result<std::optional<CacheEntry>> Lookup(const std::string& key);

  // Copies the runs' files in (hashing them), replacing an entry of the same key, then
  // evicts least recently used entries beyond max_bytes. Returns the evicted keys. An
  // entry larger than max_bytes on its own is not stored (FailedPrecondition).
  Result<std::vector<std::string>> Store(const std::string& key, const nlohmann::json& material,
                                         const std::vector<CachedRun>& runs);

  // Every entry (files not re-hashed), most recently used first.
  Result<std::vector<CacheEntry>> List() const;
  // Removes every entry; returns how many and their bytes.
  Result<std::pair<size_t, uint64_t>> Clear();

 private:
  std::filesystem::path EntriesDir() const { return root_ / "baselines"; }
  Result<std::vector<std::string>> Evict(const std::string& keep);

  std::filesystem::path root_;
  uint64_t max_bytes_;
};

// sha256 hex of a file's bytes, read in pieces.
Result<std::string> FileSha256(const std::filesystem::path& path);

}  // namespace parity::workflow
