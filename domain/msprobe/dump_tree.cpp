#include "domain/msprobe/dump_tree.h"

#include <algorithm>
#include <map>
#include <regex>

namespace parity::msprobe {

namespace fs = std::filesystem;

namespace {

// Numbered children "<prefix><N>" (and "<prefix>" alone as -1), sorted by number.
std::map<int, fs::path> NumberedDirs(const fs::path& dir, const std::string& prefix) {
  std::map<int, fs::path> found;
  std::regex pattern("^" + prefix + "(0|[1-9][0-9]*)?$");
  std::error_code ec;
  for (const auto& child : fs::directory_iterator(dir, ec)) {
    if (!child.is_directory(ec)) continue;
    std::string name = child.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, pattern)) continue;
    int number = m[1].matched ? std::stoi(m[1].str()) : -1;
    found[number] = child.path();
  }
  return found;
}

std::string Listing(const std::map<int, fs::path>& dirs) {
  std::string out;
  for (const auto& [n, p] : dirs) out += (out.empty() ? "" : ", ") + p.filename().string();
  return out.empty() ? "none" : out;
}

}  // namespace

Result<DumpFiles> LocateDump(const fs::path& path, std::optional<int> step, std::optional<int> rank) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path.string() + ": no such file or folder");
  DumpFiles files;
  fs::path rank_dir;
  if (fs::is_regular_file(path, ec)) {
    files.dump_json = path;
    rank_dir = path.parent_path();
  } else if (fs::exists(path / "dump.json", ec)) {
    rank_dir = path;
  } else {
    fs::path step_dir = path;
    auto ranks = NumberedDirs(step_dir, "rank");
    if (ranks.empty()) {
      auto steps = NumberedDirs(path, "step");
      if (steps.empty()) {
        return NotFound(path.string() + ": not an msprobe dump (no dump.json, no rank*/ and no step*/ folders)")
            .WithHint("pass the dump root, a step folder, a rank folder or dump.json itself");
      }
      auto chosen = step ? steps.find(*step) : steps.begin();
      if (chosen == steps.end()) {
        return NotFound(path.string() + ": no step" + std::to_string(*step) + " (present: " + Listing(steps) + ")");
      }
      files.step = chosen->first;
      step_dir = chosen->second;
      ranks = NumberedDirs(step_dir, "rank");
      if (ranks.empty()) return NotFound(step_dir.string() + ": no rank*/ folders");
    }
    auto chosen = rank ? ranks.find(*rank) : ranks.end();
    if (rank && chosen == ranks.end() && *rank == 0) chosen = ranks.find(-1);  // non-distributed "rank"
    if (!rank) chosen = ranks.count(0) ? ranks.find(0) : ranks.begin();
    if (chosen == ranks.end()) {
      return NotFound(step_dir.string() + ": no rank" + std::to_string(*rank) + " (present: " + Listing(ranks) + ")");
    }
    files.rank = chosen->first < 0 ? 0 : chosen->first;
    rank_dir = chosen->second;
  }
  if (files.dump_json.empty()) files.dump_json = rank_dir / "dump.json";
  if (!fs::exists(files.dump_json, ec)) return NotFound(rank_dir.string() + ": no dump.json");
  if (fs::exists(rank_dir / "stack.json", ec)) files.stack_json = rank_dir / "stack.json";
  if (fs::exists(rank_dir / "construct.json", ec)) files.construct_json = rank_dir / "construct.json";
  if (fs::is_directory(rank_dir / "dump_tensor_data", ec)) {
    files.tensor_dir = rank_dir / "dump_tensor_data";
    for (const auto& f : fs::directory_iterator(*files.tensor_dir, ec)) {
      if (f.path().extension() == ".pt") ++files.tensor_files;
    }
  }
  return files;
}

std::vector<RankFolder> ListRankFolders(const fs::path& path) {
  std::vector<RankFolder> out;
  std::error_code ec;
  if (!fs::is_directory(path, ec) || fs::exists(path / "dump.json", ec)) return out;
  auto add_ranks = [&](const fs::path& step_dir, std::optional<int> step) {
    for (const auto& [n, dir] : NumberedDirs(step_dir, "rank")) {
      if (fs::exists(dir / "dump.json", ec)) out.push_back({step, n < 0 ? 0 : n, dir});
    }
  };
  auto ranks = NumberedDirs(path, "rank");
  if (!ranks.empty()) {
    add_ranks(path, std::nullopt);
  } else {
    for (const auto& [n, dir] : NumberedDirs(path, "step")) add_ranks(dir, n);
  }
  return out;
}

}  // namespace parity::msprobe
