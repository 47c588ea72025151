// parity cache list|clear [--dir DIR]: the baseline cache `parity premerge` keeps in
// ${XDG_CACHE_HOME:-~/.cache}/parity (domain/workflow/baseline_cache.h). `list` prints one
// JSON object (the folder, its entries most recently used first, the total bytes); `clear`
// removes every entry and says how many and how large.
#include "cli/cache_command.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "domain/workflow/baseline_cache.h"

namespace parity::cli {

namespace {

using nlohmann::json;

int Usage(const std::string& why) {
  std::fprintf(stderr, "parity cache: %s\nusage: parity cache list|clear [--dir DIR]\n", why.c_str());
  return kExitUsage;
}

}  // namespace

int CacheCommand(const std::vector<std::string>& args) {
  if (args.empty()) return Usage("list or clear?");
  const std::string verb = args[0];
  if (verb != "list" && verb != "clear") return Usage("unknown action " + verb);
  std::filesystem::path dir;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--dir" && i + 1 < args.size()) dir = args[++i];
    else return Usage("unknown option " + args[i]);
  }
  if (dir.empty()) {
    auto root = workflow::BaselineCache::DefaultRoot();
    if (!root.ok()) {
      std::fprintf(stderr, "parity cache: %s\n", root.status().ToString().c_str());
      return kExitFailure;
    }
    dir = *root;
  }
  workflow::BaselineCache cache(std::filesystem::absolute(dir));
  if (verb == "clear") {
    auto removed = cache.Clear();
    if (!removed.ok()) {
      std::fprintf(stderr, "parity cache clear: %s\n", removed.status().ToString().c_str());
      return kExitFailure;
    }
    std::printf("%s\n", json({{"dir", cache.root().string()}, {"removed", removed->first}, {"bytes", removed->second}})
                            .dump(2)
                            .c_str());
    return kExitOk;
  }
  auto entries = cache.List();
  if (!entries.ok()) {
    std::fprintf(stderr, "parity cache list: %s\n", entries.status().ToString().c_str());
    return kExitFailure;
  }
  json list = json::array();
  uint64_t total = 0;
  for (const auto& e : *entries) {
    total += e.bytes;
    const json& run = e.material.value("run_training", json::object());
    list.push_back({{"key", e.key},
                    {"created", e.created},
                    {"last_used", e.last_used},
                    {"bytes", e.bytes},
                    {"runs", e.runs.size()},
                    {"tree", e.material.value("tree", json(nullptr))},
                    {"config", run.value("config", json(nullptr))},
                    {"steps", e.material.value("steps", json(nullptr))},
                    {"environment_fingerprint", e.material.value("environment_fingerprint", json(nullptr))},
                    {"dir", e.dir.string()}});
  }
  std::printf("%s\n", json({{"dir", cache.root().string()}, {"entries", list}, {"bytes", total}}).dump(2).c_str());
  return kExitOk;
}

}  // namespace parity::cli
