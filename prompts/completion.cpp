#include "prompts/completion.h"

#include <algorithm>

#include "domain/workflow/repo_catalog.h"

namespace parity::prompts {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> WithPrefix(const std::vector<std::string>& values, std::string_view prefix) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    if (v.compare(0, prefix.size(), prefix) == 0) out.push_back(v);
  }
  return out;
}

std::vector<std::string> ModelNames(const fs::path& repo) {
  auto catalog = workflow::ReadModelCatalog(repo);
  std::vector<std::string> names;
  if (catalog.ok()) {
    for (const auto& [model, configs] : catalog->configs) names.push_back(model);
  }
  return names;
}

}  // namespace

fs::path RepoFrom(const mcp::json& arguments, const fs::path& default_repo) {
  if (arguments.is_object() && arguments.contains("repo") && arguments["repo"].is_string()) {
    std::string repo = arguments["repo"].get<std::string>();
    if (!repo.empty()) return fs::path(repo).is_absolute() ? fs::path(repo) : default_repo / repo;
  }
  return default_repo;
}

mcp::Completer CompleteBranches(fs::path default_repo) {
  return [default_repo](std::string_view value, const mcp::json& context) {
    auto branches = workflow::ListBranches(RepoFrom(context, default_repo));
    return branches.ok() ? WithPrefix(*branches, value) : std::vector<std::string>{};
  };
}

mcp::Completer CompleteModels(fs::path default_repo) {
  return [default_repo](std::string_view value, const mcp::json& context) {
    auto models = ModelNames(RepoFrom(context, default_repo));
    models.insert(models.begin(), "all");
    return workflow::CompleteList(value, models);
  };
}

mcp::Completer CompleteConfigs(fs::path default_repo) {
  return [default_repo](std::string_view value, const mcp::json& context) {
    auto catalog = workflow::ReadModelCatalog(RepoFrom(context, default_repo));
    if (!catalog.ok()) return std::vector<std::string>{};
    std::vector<std::string> models;
    if (context.is_object() && context.contains("models") && context["models"].is_string()) {
      models = workflow::SplitList(context["models"].get<std::string>());
      if (std::find(models.begin(), models.end(), "all") != models.end()) models.clear();
    }
    return workflow::CompleteList(value, workflow::ConfigsOf(*catalog, models));
  };
}

mcp::Completer CompleteJsonFiles(fs::path default_repo) {
  return [default_repo](std::string_view value, const mcp::json& context) {
    fs::path repo = RepoFrom(context, default_repo);
    std::vector<std::string> files;
    std::error_code ec;
    fs::recursive_directory_iterator it(repo, fs::directory_options::skip_permission_denied, ec), end;
    for (size_t visited = 0; !ec && it != end && visited < 20000; it.increment(ec), ++visited) {
      std::string name = it->path().filename().string();
      if (it->is_directory(ec)) {
        if (it.depth() >= 1 || name.empty() || name[0] == '.' || name == "node_modules") it.disable_recursion_pending();
        continue;
      }
      if (it->path().extension() == ".json") files.push_back(fs::relative(it->path(), repo, ec).string());
    }
    std::sort(files.begin(), files.end());
    return WithPrefix(files, value);
  };
}

mcp::Completer CompleteFixed(std::vector<std::string> values) {
  return [values](std::string_view value, const mcp::json&) { return WithPrefix(values, value); };
}

}  // namespace parity::prompts
