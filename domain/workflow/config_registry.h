// The models and configs a trainer registers, read from one commit of its repository through
// git (the committed tree, never a working tree), so a config name can be checked before any
// worktree is made. The registries parity knows, as the trainers write them:
//  - `config_registry.py` (torchtitan HEAD, torchtitan-npu: `--module M --config C`): its
//    public top-level functions are the configs of models/<M>/; a module-level table of
//    tables (`MODULES = {"toy": {"toy_small": ...}}`, the toy trainer) names models and configs;
//  - TOML job files under a `train_configs/` folder (torchtitan 0.2.x: `--job.config_file`,
//    `CONFIG_FILE=`): each file's stem is a config, of the model its `[model] name` says (else
//    of models/<M>/ it lies under);
//  - python dicts of flavors in the files under a `models/` folder (`llama3_configs =
//    {"debugmodel": ..., "8B": ...}`, also `llama3_configs["1B"] = ...`): the dict's keys are
//    configs (`--model.flavor`) of the model that names the dict (`models_config = {"llama3":
//    llama3_configs}`, `TrainSpec(name="llama3", model_args=llama3_configs)`), else of the
//    models/<M>/ folder the dict is in. Only dicts whose name ends in configs, args or flavors.
// Bounded: at most 2000 files and 32 MiB read, each file at most 1 MiB. Read-only.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

struct TreeRegistry {
  std::string commit;
  std::map<std::string, std::vector<std::string>> configs;  // model -> its configs, in the order found
  std::vector<std::string> sources;                         // the registry files read, repository-relative
  std::set<std::string> paths;                              // every file of the tree

  bool empty() const { return configs.empty(); }
  bool HasModel(const std::string& model) const { return configs.count(model) > 0; }
  // The configs of `model` (every model's when empty), without duplicates.
  std::vector<std::string> ConfigsOf(const std::string& model) const;
  std::vector<std::string> Models() const;
};

// The registries of `commit` in the repository at `repo`.
Result<TreeRegistry> ReadTreeRegistry(const std::filesystem::path& repo, const std::string& commit);

// Whether a file (repository-relative, '/'-separated) is one a registry may be in.
bool MayRegister(const std::string& path);

// Reads registry files one by one (a dict in one file may be named by another), then
// Finish() resolves what they register together. Also used on a working tree (prompt
// completion reads the server's folder).
class RegistryParser {
 public:
  void Add(const std::string& path, const std::string& text);
  TreeRegistry Finish();

 private:
  struct Dict {
    std::string file, name;
    std::vector<std::string> keys;
  };
  struct Reference {
    std::string model, dict;  // model "" : the models/<M>/ folder of `file`
    std::string file;
  };
  TreeRegistry out_;
  std::vector<Dict> dicts_;
  std::vector<Reference> refs_;
  void AddConfig(const std::string& model, const std::string& config);
};

// Public top-level `def name(` of a python file.
std::vector<std::string> TopLevelFunctions(const std::string& text);

}  // namespace parity::workflow
