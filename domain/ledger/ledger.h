// The ledger: what parity did, in `<report_dir>/manifest.json` (schema in
// docs/CONTRACTS.md §2). Every tool that acts appends an entry; render_report's reproduce
// section and `parity reproduce` are generated from it, so it records real commands and
// values only. Appends and updates are atomic (temp file + rename) under an flock, so
// several tools and processes may write concurrently. Readers that rewrite the file keep
// keys they do not know.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::ledger {

using json = nlohmann::json;

struct Command {
  std::vector<std::string> argv;
  std::string cwd;
  std::map<std::string, std::string> env;  // only what parity set or what matters
  std::string host = "local";              // or "user@host:port"
};

struct Entry {
  std::string tool;    // e.g. "run_training"
  std::string action;  // e.g. "train"
  std::optional<std::string> side;    // baseline | candidate | both
  std::optional<std::string> config;
  std::optional<Command> command;
  json git;          // {"repo","ref","commit","worktree"}; null = omitted
  json inputs;
  json outputs;      // paths relative to report_dir
  json outcome;      // {"status": ok|failed|cancelled|timeout|running, ...}
  json environment;  // {"fingerprint", "summary"}
};

inline constexpr const char* kManifestName = "manifest.json";
inline constexpr const char* kSchema = "parity.manifest/1";

// Appends an entry (creating report_dir and the manifest when needed); returns its id.
Result<std::string> Append(const std::filesystem::path& report_dir, const Entry& entry);

// Applies a JSON merge patch (RFC 7386) to the entry with this id.
Status Update(const std::filesystem::path& report_dir, const std::string& id, const json& merge_patch);

// The whole manifest; NotFound when there is none yet.
Result<json> Read(const std::filesystem::path& report_dir);

json ToJson(const Command& command);

// UTC now as ISO 8601 ("2026-11-30T05:21:02Z").
std::string NowUtc();

}  // namespace parity::ledger
