#include "domain/workflow/repo_catalog.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "domain/workflow/config_registry.h"
#include "support/subprocess.h"
#include "support/file_read.h"

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxDepth = 6;
constexpr size_t kMaxEntries = 200000;       // directory entries visited per scan
constexpr size_t kMaxRegistryBytes = 1 << 20;

bool SkippedFolder(const std::string& name) {
  static const std::set<std::string> kSkip = {"node_modules", "__pycache__", "build", "outputs", "numerical_report",
                                              "site-packages", "venv"};
  return name.empty() || name[0] == '.' || kSkip.count(name) > 0;
}

}  // namespace

Result<std::vector<std::string>> ListBranches(const fs::path& repo) {
  ProcessOptions options;
  options.argv = {"git", "-C", repo.string(), "for-each-ref", "--format=%(refname)%09%(symref)", "refs/heads",
                  "refs/remotes"};
  options.timeout = std::chrono::seconds(10);
  options.output_cap = 4 << 20;
  PARITY_ASSIGN_OR_RETURN(auto result, RunProcess(options));
  if (!result.success()) return ProcessFailure("listing the branches of " + repo.string(), options, result);
  std::vector<std::string> names;
  std::istringstream lines(result.out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos || tab + 1 < line.size()) continue;  // symbolic ref (origin/HEAD)
    std::string ref = line.substr(0, tab);
    for (std::string_view prefix : {"refs/heads/", "refs/remotes/"}) {
      if (ref.rfind(prefix, 0) == 0) names.push_back(ref.substr(prefix.size()));
    }
  }
  return names;
}

Result<std::vector<std::string>> ChangedFiles(const fs::path& repo, const std::string& a, const std::string& b) {
  ProcessOptions options;
  options.argv = {"git", "-C", repo.string(), "diff", "--name-only", "--end-of-options", a, b, "--"};
  options.timeout = std::chrono::seconds(30);
  options.output_cap = 4 << 20;
  PARITY_ASSIGN_OR_RETURN(auto result, RunProcess(options));
  if (!result.success()) return ProcessFailure("git diff " + a + " " + b, options, result);
  std::vector<std::string> files;
  std::istringstream lines(result.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty()) files.push_back(line);
  }
  return files;
}

Result<ModelCatalog> ReadModelCatalog(const fs::path& repo) {
  std::error_code ec;
  if (!fs::is_directory(repo, ec)) return NotFound("repository folder " + repo.string() + " does not exist");
  ModelCatalog catalog;
  RegistryParser parser;
  size_t visited = 0;
  fs::recursive_directory_iterator it(repo, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) return Unavailable("cannot read " + repo.string() + ": " + ec.message());
  for (; it != end && visited < kMaxEntries; it.increment(ec), ++visited) {
    if (ec) break;
    const fs::path& path = it->path();
    std::string name = path.filename().string();
    if (it->is_directory(ec)) {
      if (SkippedFolder(name) || it.depth() >= kMaxDepth) it.disable_recursion_pending();
      continue;
    }
    if (name != "config_registry.py") continue;
    auto text = ReadFilePrefix(path, kMaxRegistryBytes);
    if (!text.ok()) continue;
    catalog.registries.push_back(path);
    parser.Add(path.lexically_relative(repo).generic_string(), *text);
  }
  for (auto& [model, configs] : parser.Finish().configs) {
    if (!model.empty()) catalog.configs[model] = std::move(configs);
  }
  return catalog;
}

std::vector<std::string> ConfigsOf(const ModelCatalog& catalog, const std::vector<std::string>& models) {
  std::vector<std::string> out;
  for (const auto& [model, configs] : catalog.configs) {
    if (!models.empty() && std::find(models.begin(), models.end(), model) == models.end()) continue;
    for (const auto& c : configs) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> SplitList(std::string_view value) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string item(value.substr(start, comma - start));
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) items.push_back(item);
    start = comma + 1;
  }
  return items;
}

std::vector<std::string> CompleteList(std::string_view value, const std::vector<std::string>& choices, size_t limit) {
  size_t comma = value.rfind(',');
  std::string head = comma == std::string_view::npos ? "" : std::string(value.substr(0, comma + 1));
  std::string_view last = comma == std::string_view::npos ? value : value.substr(comma + 1);
  while (!last.empty() && last.front() == ' ') last.remove_prefix(1);
  std::vector<std::string> already = SplitList(head);
  std::vector<std::string> out;
  for (const auto& choice : choices) {
    if (out.size() >= limit) break;
    if (choice.compare(0, last.size(), last) != 0) continue;
    if (std::find(already.begin(), already.end(), choice) != already.end()) continue;
    out.push_back(head + choice);
  }
  return out;
}

}  // namespace parity::workflow
