#include "domain/workflow/config_names.h"

#include <algorithm>
#include <filesystem>

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

std::string Join(const std::vector<std::string>& items, size_t limit = 30) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (out.empty() ? "" : ", ") + items[i];
  if (items.size() > limit) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out.empty() ? "none" : out;
}

std::string ReadFrom(const TreeRegistry& r) { return "read from " + Join(r.sources, 8); }

Status NoRegistry(const std::string& what, const std::string& where, const std::string& side) {
  return FailedPrecondition(where + ": parity found no registry of models and configs in " + side +
                            " (it reads config_registry.py, train_configs/*.toml and the flavor dicts of models/*/), "
                            "so it cannot check that " + what + " exists before the runs")
      .WithEvidence("no_registry", what);
}

}  // namespace

ChosenNames NamesInCommand(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
  ChosenNames names;
  if (auto it = env.find("CONFIG_FILE"); it != env.end()) names.config_file = it->second;
  const std::vector<std::pair<const char*, std::optional<std::string> ChosenNames::*>> flags = {
      {"--module", &ChosenNames::model},        {"--model.name", &ChosenNames::model},
      {"--config", &ChosenNames::config},       {"--model.flavor", &ChosenNames::config},
      {"--job.config_file", &ChosenNames::config_file}, {"--job.config-file", &ChosenNames::config_file}};
  for (size_t i = 0; i < argv.size(); ++i) {
    for (const auto& [flag, member] : flags) {
      const std::string f = flag;
      if (argv[i] == f && i + 1 < argv.size()) {
        names.*member = argv[i + 1];
      } else if (argv[i].rfind(f + "=", 0) == 0) {
        names.*member = argv[i].substr(f.size() + 1);
      }
    }
  }
  return names;
}

Status CheckNames(const ChosenNames& names, const std::string& where, const TreeRegistry& registry,
                  const std::string& side) {
  if (names.config_file) {
    fs::path p = fs::path(*names.config_file).lexically_normal();
    std::string rel = p.generic_string();
    if (rel.rfind("./", 0) == 0) rel = rel.substr(2);
    if (!p.is_absolute() && rel.rfind("..", 0) != 0 && !registry.paths.count(rel)) {
      std::vector<std::string> tomls;
      for (const auto& path : registry.paths) {
        if (path.find("train_configs/") != std::string::npos) tomls.push_back(path);
      }
      return InvalidArgument(where + ": the job config file " + *names.config_file + " is not in " + side)
          .WithHint("job config files there: " + Join(tomls) + " (uncommitted files are not read: commit a new one)");
    }
  }
  if (names.model) {
    if (registry.Models().empty()) return NoRegistry("the model \"" + *names.model + "\"", where, side);
    if (!registry.HasModel(*names.model)) {
      return InvalidArgument(where + ": the model \"" + *names.model + "\" is not registered in " + side)
          .WithHint("registered models: " + Join(registry.Models()) + " (" + ReadFrom(registry) + ")");
    }
  }
  if (names.config) {
    const std::string model = names.model.value_or("");
    std::vector<std::string> known = registry.ConfigsOf(model);
    const std::string what = "the config \"" + *names.config + "\"" + (model.empty() ? "" : " of the model " + model);
    if (known.empty()) return NoRegistry(what, where, side);
    if (std::find(known.begin(), known.end(), *names.config) == known.end()) {
      return InvalidArgument(where + ": " + what + " is not registered in " + side)
          .WithHint("registered" + std::string(model.empty() ? "" : " for " + model) + ": " + Join(known) + " (" +
                    ReadFrom(registry) + "; uncommitted files are not read)");
    }
  }
  return Status::Ok();
}

bool IsNoRegistry(const Status& status) {
  return std::any_of(status.evidence().begin(), status.evidence().end(),
                     [](const EvidenceItem& e) { return e.name == "no_registry"; });
}

}  // namespace parity::workflow
