// PrecisionComparer's config.json, read as-is (the user's existing files keep working):
// baseline / test sides (local or SSH), msprobe data folders, debug options. Decoding errors
// name the JSON path ("config.json: test.mode: expected one of local, remote"). The SSH
// password is kept only in memory and never printed (see Redacted()).
//
// parity's additions (optional, so a PrecisionComparer file works unchanged): a side's
// `ref` (the commit, branch or tag of code_path that side runs; default the code_path's
// HEAD), which lets both sides be branches of one repository. A relative code_path is
// taken from the config file's folder.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

struct ComparerSsh {
  std::string host;
  std::string username;
  int port = 22;
  std::optional<std::string> password;
};

struct ComparerSide {
  std::string mode = "local";  // local | remote
  std::string log_path;
  std::string code_path;
  std::string run_script;
  std::optional<std::string> ref;  // parity: commit/branch of code_path (default its HEAD)
  std::optional<ComparerSsh> ssh;  // required for remote
};

struct ComparerConfig {
  std::string name = "config";  // how errors name the file ("config.json")
  ComparerSide baseline, test;
  std::string baseline_data_dir, test_data_dir, parse_code_dir, compare_output_dir;
  int max_iterations = 10;
  double tolerance = 0.001;
  std::vector<std::string> log_keywords;
  double trace_threshold = 0.001;
};

Result<ComparerConfig> ParseComparerConfig(const nlohmann::json& value, const std::string& name);
Result<ComparerConfig> ReadComparerConfig(const std::filesystem::path& path);

// The config as JSON with the SSH passwords replaced by "***".
nlohmann::json Redacted(const ComparerConfig& config);

}  // namespace parity::workflow
