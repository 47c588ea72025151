// The premerge's side of the baseline cache: what the key is made of, how cached runs are
// put back into the report directory (and the ledger, marked "from cache"), and what is
// stored after a miss. The cache itself is baseline_cache.cpp.
#include <algorithm>

#include "domain/ledger/ledger.h"
#include "domain/workflow/premerge_runs.h"
#include "support/subprocess.h"
#include "support/version.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Every string in `value` with `from` replaced by `to` (paths of one premerge made
// comparable with another's, or mapped into this one).
json ReplaceInStrings(const json& value, const std::vector<std::pair<std::string, std::string>>& pairs) {
  if (value.is_string()) {
    std::string s = value;
    for (const auto& [from, to] : pairs) {
      if (from.empty()) continue;
      for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    }
    return s;
  }
  if (value.is_array() || value.is_object()) {
    json out = value;
    for (auto it = out.begin(); it != out.end(); ++it) *it = ReplaceInStrings(*it, pairs);
    return out;
  }
  return value;
}

// sha256 over a folder's files: relative path and content hash of each, in path order.
Result<std::string> FolderSha256(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("the initial checkpoint " + dir.string() + " is not a folder");
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) return Unavailable("cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  json listing = json::array();
  for (const auto& f : files) {
    PARITY_ASSIGN_OR_RETURN(std::string hash, FileSha256(f));
    listing.push_back({f.lexically_relative(dir).string(), hash});
  }
  return BaselineCache::KeyOf(listing);
}

Result<std::string> TreeOf(const std::string& repo, const std::string& commit) {
  ProcessOptions o;
  o.argv = {"git", "-C", repo, "rev-parse", "--verify", commit + "^{tree}"};
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};
  o.timeout = std::chrono::seconds(60);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
  if (!r.success()) return ProcessFailure("reading the baseline's tree id", o, r);
  std::string tree = r.out.substr(0, r.out.find('\n'));
  if (tree.size() != 40) return Internal("git rev-parse printed no tree id: " + r.out);
  return tree;
}

// An input outside the worktree (an absolute dataset or tokenizer file) is part of the
// key by its content; a folder there cannot be, and then the cache is not used.
Status HashOutside(const std::optional<std::string>& path, const char* name, json& material) {
  if (!path || !fs::path(*path).is_absolute()) return Status::Ok();
  std::error_code ec;
  if (!fs::is_regular_file(*path, ec)) {
    return FailedPrecondition(std::string(name) + " " + *path + " lies outside the worktree and is not a single file, so "
                              "its content cannot be part of the cache key");
  }
  PARITY_ASSIGN_OR_RETURN(std::string hash, FileSha256(*path));
  material[std::string(name) + "_sha256"] = hash;
  return Status::Ok();
}

// A log of the same name from an earlier run in this report directory is kept beside it,
// as run_training keeps it.
Status MoveAside(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  fs::path old = path;
  old.replace_extension(".before-cache-" + ledger::NowUtc() + ".log");
  fs::rename(path, old, ec);
  if (ec) return Unavailable("cannot move the previous log " + path.string() + " aside: " + ec.message());
  return Status::Ok();
}

}  // namespace

std::optional<BaselineCache> CaseRunner::OpenCache(std::string& why_not) const {
  if (options_.no_cache) {
    why_not = "--no-cache";
    return std::nullopt;
  }
  if (!config_.cache.enabled) {
    why_not = "cache.enabled is false";
    return std::nullopt;
  }
  fs::path root;
  if (config_.cache.dir) {
    root = *config_.cache.dir;
  } else {
    auto d = BaselineCache::DefaultRoot();
    if (!d.ok()) {
      why_not = d.status().message();
      return std::nullopt;
    }
    root = *d;
  }
  return BaselineCache(root, config_.cache.max_bytes);
}

Result<json> CaseRunner::CacheMaterial(const MatrixEntry& entry, const Worktrees& wt, const BaselineSource& source,
                                       const json& checkpoint_run) const {
  const json& fingerprint = checkpoint_run.value("environment", json::object());
  if (!fingerprint.is_object() || fingerprint.value("sha256", "").empty()) {
    return FailedPrecondition("the environment was not fingerprinted (" + fingerprint.value("error", "no probe") + ")");
  }
  PARITY_ASSIGN_OR_RETURN(std::string tree, TreeOf(source.repo, source.commit));
  json class_b = json::object();
  for (const auto& [path, cls] : source.classes) {
    if (cls != "B") continue;
    const fs::path file = fs::path(wt.baseline) / path;
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      class_b[path] = "absent";
    } else {
      PARITY_ASSIGN_OR_RETURN(class_b[path], FileSha256(file));
    }
  }
  const std::string checkpoint = checkpoint_run["job"].value("checkpoint", "");
  if (checkpoint.empty()) return FailedPrecondition("the initial checkpoint run named no checkpoint folder");
  PARITY_ASSIGN_OR_RETURN(std::string checkpoint_hash, FolderSha256(checkpoint));
  // The run as run_training is asked for it, with this premerge's own paths taken out.
  json run = SideArgs(entry, BaselineSide(0), "{worktree}", config_.steps, {});
  run.erase("report_dir");
  run.erase("timeout_s");
  run = ReplaceInStrings(run, {{config_.report_dir.string(), "{report_dir}"}});
  json material = {{"schema", "parity.baseline-key/1"},
                   {"parity", PARITY_VERSION},
                   {"tree", tree},
                   {"class_b", class_b},
                   {"run_training", run},
                   {"checkpoint_sha256", checkpoint_hash},
                   {"environment_fingerprint", fingerprint["sha256"]},
                   {"steps", config_.steps},
                   {"seed", 42},  // run_training's default, which the premerge does not change
                   {"tensorboard", config_.tensorboard}};
  if (config_.metrics_file) material["metrics_file"] = *config_.metrics_file;
  PARITY_RETURN_IF_ERROR(HashOutside(config_.dataset_path, "dataset", material));
  PARITY_RETURN_IF_ERROR(HashOutside(config_.tokenizer, "tokenizer", material));
  return material;
}

Result<std::vector<CaseRunner::Run>> CaseRunner::ReuseCached(const MatrixEntry& entry, const Worktrees& wt,
                                                             const BaselineSource& source, const CacheEntry& cached,
                                                             int count) {
  std::vector<Run> runs;
  for (int i = 0; i < count; ++i) {
    const CachedRun& c = cached.runs[static_cast<size_t>(i)];
    Run r;
    r.side = BaselineSide(i);
    r.from_cache = true;
    const fs::path log = config_.report_dir / (r.side + "_" + entry.name + "_train.log");
    std::error_code ec;
    fs::create_directories(config_.report_dir, ec);
    PARITY_RETURN_IF_ERROR(MoveAside(log));
    PARITY_RETURN_IF_ERROR(CopyFileUnder(c.log, config_.report_dir, log.lexically_relative(config_.report_dir))
                               .Context("copying the cached log"));
    r.log = log.string();
    json outputs = {{"log", log.lexically_relative(config_.report_dir).string()}};
    if (FullPrecision()) {
      if (c.events.empty()) {
        return FailedPrecondition("the cached baseline run " + std::to_string(i + 1) + " has no full-precision metrics");
      }
      const fs::path events = config_.metrics_file ? MetricsCopy(r.side, entry.name)
                                                   : TensorBoardDir(r.side, entry.name) / "from-cache" / c.events.filename();
      PARITY_RETURN_IF_ERROR(CopyFileUnder(c.events, config_.report_dir, events.lexically_relative(config_.report_dir))
                                 .Context("copying the cached metrics"));
      r.events = events.string();
      outputs["events"] = events.lexically_relative(config_.report_dir).string();
    }
    // Copies must be what was stored (Lookup checked the cache's own files).
    for (const auto& [file, want] : {std::pair{r.log, c.log_sha256}, std::pair{r.events, c.events_sha256}}) {
      if (file.empty()) continue;
      PARITY_ASSIGN_OR_RETURN(std::string got, FileSha256(file));
      if (got != want) return Unavailable("the copy " + file + " of a cached run has sha256 " + got + ", not " + want);
    }

    // The ledger says what the run was and that it came from the cache: the command is the
    // one this premerge would have run (the key says so), so `parity reproduce` replays it.
    const json& was = c.ledger_entry;
    const std::vector<std::pair<std::string, std::string>> paths = {{c.report_dir, config_.report_dir.string()},
                                                                    {c.worktree, wt.baseline}};
    ledger::Entry e;
    e.tool = "parity premerge";
    e.action = "train";
    e.side = r.side;
    e.config = entry.name;
    if (was.contains("command") && was["command"].is_object()) {
      json cmd = ReplaceInStrings(was["command"], paths);
      e.command = ledger::Command{cmd.value("argv", std::vector<std::string>{}), cmd.value("cwd", wt.baseline),
                                  cmd.value("env", std::map<std::string, std::string>{}), cmd.value("host", "local")};
    }
    e.git = {{"worktree", wt.baseline}, {"commit", source.commit}};
    const json old_git = was.value("git", json::object());
    if (old_git.value("commit", json()).is_string() && old_git["commit"] != source.commit) {
      e.git["cached_from_commit"] = old_git["commit"];  // another commit of the same tree
    }
    e.inputs = ReplaceInStrings(was.value("inputs", json::object()), paths);
    if (e.inputs.contains("job_id")) {
      e.inputs["cached_job_id"] = e.inputs["job_id"];
      e.inputs.erase("job_id");
    }
    e.inputs.erase("previous_log_kept_as");
    e.outputs = outputs;
    e.outcome = {{"status", "ok"},
                 {"from_cache", true},
                 {"cache_key", cached.key},
                 {"cached_at", cached.created},
                 {"trained_at", was.value("time", json(nullptr))},
                 {"log_sha256", c.log_sha256},
                 {"events_sha256", c.events_sha256.empty() ? json(nullptr) : json(c.events_sha256)},
                 {"message", "from cache: baseline run " + std::to_string(i + 1) + " reused (trained " +
                                 was.value("time", std::string("earlier")) + ", key " + cached.key.substr(0, 16) + ")"}};
    if (was.contains("outcome") && was["outcome"].is_object()) {
      for (const char* k : {"exit_code", "duration_s", "steps"}) {
        if (was["outcome"].contains(k)) e.outcome["trained_" + std::string(k)] = was["outcome"][k];
      }
    }
    e.environment = was.value("environment", json::object());
    PARITY_RETURN_IF_ERROR(ledger::Append(config_.report_dir, e).status());
    r.environment = e.environment;
    r.ledger_entry = was;  // kept as first recorded, should the entry be stored again
    r.recorded_report_dir = c.report_dir;
    r.recorded_worktree = c.worktree;
    runs.push_back(std::move(r));
  }
  return runs;
}

Status CaseRunner::StoreInCache(const std::string& key, const json& material, const std::vector<Run>& runs) {
  std::string why;
  std::optional<BaselineCache> cache = OpenCache(why);
  if (!cache) return FailedPrecondition(why);
  PARITY_ASSIGN_OR_RETURN(json manifest, ledger::Read(config_.report_dir));
  std::vector<CachedRun> stored;
  for (const auto& r : runs) {
    CachedRun c;
    c.log = r.log;
    c.events = r.events;
    c.report_dir = config_.report_dir.string();
    if (r.from_cache) {
      c.ledger_entry = r.ledger_entry;  // as first recorded, with the paths of then
      c.report_dir = r.recorded_report_dir;
      c.worktree = r.recorded_worktree;
    } else {
      const std::string id = r.job.value("ledger_entry", json()).is_string() ? r.job["ledger_entry"].get<std::string>() : "";
      for (const auto& e : manifest.value("entries", json::array())) {
        if (e.value("id", "") == id) c.ledger_entry = e;
      }
      if (c.ledger_entry.is_null()) return FailedPrecondition("the ledger has no entry " + id + " for " + r.side);
      c.worktree = r.job.value("command", json::object()).value("cwd", "");
    }
    stored.push_back(std::move(c));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> evicted, cache->Store(key, material, stored));
  for (const auto& k : evicted) observer_.Note("baseline cache: evicted " + k.substr(0, 16) + " (least recently used)");
  return Status::Ok();
}

}  // namespace parity::workflow
