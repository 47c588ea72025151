#include "domain/workflow/premerge_config.h"
#include "support/json_document.h"

#include <fstream>
#include <sstream>

#include "support/json_reader.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

Status DecodeConfigs(const nlohmann::json& list, const std::string& path, std::vector<MatrixEntry>& out) {
  if (!list.is_array()) return InvalidArgument(path + ": expected array, got " + JsonTypeName(list));
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = path + "[" + std::to_string(i) + "]";
    MatrixEntry entry;
    if (list[i].is_string()) {
      entry.name = list[i].get<std::string>();
    } else if (list[i].is_object()) {
      JsonReader r(list[i], at);
      r.Required("name", entry.name).Optional("extra_args", entry.extra_args).Optional("resume_at", entry.resume_at);
      PARITY_RETURN_IF_ERROR(r.Finish());
    } else {
      return InvalidArgument(at + ": expected a config name or {\"name\", \"extra_args\"}, got " + JsonTypeName(list[i]));
    }
    if (entry.name.empty()) return InvalidArgument(at + ": empty config name");
    out.push_back(std::move(entry));
  }
  return Status::Ok();
}

Status DecodeConsent(JsonReader& r, PremergeConsent& c) {
  r.Optional("environment_anomalies", c.environment_anomalies).Optional("config_matrix", c.config_matrix);
  r.Optional("mail", c.mail).Optional("stale_worktrees", c.stale_worktrees);
  r.Optional("unregistered_configs", c.unregistered_configs).Allow("classes");
  return Status::Ok();
}

}  // namespace

Result<PremergeConfig> ParsePremergeConfig(const nlohmann::json& value, const std::string& name, const fs::path& base) {
  PARITY_RETURN_IF_ERROR(ExpectObject(value, name));
  PremergeConfig c;
  std::string repo = ".", report_dir;
  JsonReader r(value, name);
  r.Optional("repo", repo).Optional("report_dir", report_dir).Required("baseline", c.baseline);
  r.Optional("candidate", c.candidate).Optional("model", c.model).Allow("configs");
  r.Optional("steps", c.steps).Optional("dataset_path", c.dataset_path).Optional("tokenizer", c.tokenizer);
  r.Optional("launcher", c.launcher).Optional("script", c.script).Optional("env", c.env).Optional("timeout_s", c.timeout_s);
  r.Optional("baseline_path", c.baseline_path).Optional("candidate_path", c.candidate_path);
  c.tensorboard = !c.launcher || *c.launcher == "torchtitan";
  r.Optional("tensorboard", c.tensorboard).Optional("metrics_file", c.metrics_file);
  r.Object("compare", false, [&](JsonReader& s) {
    s.Optional("preset", c.preset).Optional("bitwise", c.bitwise).Optional("tolerance_abs", c.tolerance_abs);
  });
  r.Object("report", false, [&](JsonReader& s) {
    s.Optional("language", c.language).OneOf("language", c.language, {"zh", "en"}).Optional("title", c.title);
  });
  r.Optional("mail", c.mail).Optional("cleanup", c.cleanup);
  r.Optional("executor", c.executor).OneOf("executor", c.executor, {"local", "slurm"});
  std::optional<int> max_parallel;
  r.Optional("max_parallel", max_parallel).Optional("stop_at_first_failure", c.stop_at_first_failure);
  r.Object("confirm", false, [&](JsonReader& s) { (void)DecodeConsent(s, c.confirm); });
  const bool noise = value.contains("noise") && !value["noise"].is_null();
  if (noise) {
    r.Object("noise", false, [&](JsonReader& s) {
      s.Required("repeats", c.noise.repeats).Optional("safety_factor", c.noise.safety_factor);
    });
  } else {
    r.Allow("noise");
  }
  std::optional<std::string> cache_dir;
  int64_t max_bytes = static_cast<int64_t>(c.cache.max_bytes);
  r.Object("cache", false, [&](JsonReader& s) {
    s.Optional("enabled", c.cache.enabled).Optional("dir", cache_dir).Optional("max_bytes", max_bytes);
  });
  PARITY_RETURN_IF_ERROR(r.Finish());
  if (noise) {
    // Two runs give one difference and no spread to speak of; three are the fewest whose
    // range says something about a fourth.
    if (c.noise.repeats < 3) return InvalidArgument(name + ".noise.repeats: must be at least 3 (K baseline runs)");
    if (c.noise.repeats > 20) return InvalidArgument(name + ".noise.repeats: at most 20");
    if (!(c.noise.safety_factor >= 1) || c.noise.safety_factor > 1e6) {
      return InvalidArgument(name + ".noise.safety_factor: must be a number >= 1");
    }
  }
  if (max_bytes < (int64_t{1} << 20)) return InvalidArgument(name + ".cache.max_bytes: must be at least 1 MiB");
  c.cache.max_bytes = static_cast<uint64_t>(max_bytes);
  if (value.contains("configs") && !value["configs"].is_null()) {
    PARITY_RETURN_IF_ERROR(DecodeConfigs(value["configs"], name + ".configs", c.configs));
  }
  if (value.contains("confirm") && value["confirm"].contains("classes")) {
    const auto& classes = value["confirm"]["classes"];
    std::string at = name + ".confirm.classes";
    if (classes.is_string()) {
      if (classes != "proposed") return InvalidArgument(at + ": expected \"proposed\" or {path: \"A|B|C|ignore\"}");
      c.confirm.classes_proposed = true;
    } else if (classes.is_object()) {
      std::map<std::string, std::string> chosen;
      for (const auto& [path, cls] : classes.items()) {
        if (!cls.is_string() || (cls != "A" && cls != "B" && cls != "C" && cls != "ignore")) {
          return InvalidArgument(at + "[\"" + path + "\"]: expected one of A, B, C, ignore");
        }
        chosen[path] = cls.get<std::string>();
      }
      c.confirm.classes = std::move(chosen);
    } else if (!classes.is_null()) {
      return InvalidArgument(at + ": expected \"proposed\" or an object, got " + JsonTypeName(classes));
    }
  }
  if (c.baseline.empty()) return InvalidArgument(name + ".baseline: must not be empty");
  if (c.steps < 1) return InvalidArgument(name + ".steps: must be at least 1");
  for (size_t i = 0; i < c.configs.size(); ++i) {
    const auto& k = c.configs[i].resume_at;
    if (k && (*k < 1 || *k >= c.steps)) {
      return InvalidArgument(name + ".configs[" + std::to_string(i) + "].resume_at: must be between 1 and steps - 1 (" +
                             std::to_string(c.steps - 1) + ")");
    }
  }
  if (c.tolerance_abs && !(*c.tolerance_abs >= 0)) return InvalidArgument(name + ".compare.tolerance_abs: must be >= 0");
  if (c.timeout_s < 0) return InvalidArgument(name + ".timeout_s: must be >= 0");
  if (max_parallel && *max_parallel < 1) return InvalidArgument(name + ".max_parallel: must be at least 1");
  if (c.metrics_file) {
    if (c.metrics_file->empty() || !IsPlainRelative(*c.metrics_file)) {
      return InvalidArgument(name + ".metrics_file: \"" + *c.metrics_file +
                             "\" must be a path inside the worktree (relative, without \"..\")")
          .WithHint("name the file the trainer writes, relative to the repository root, e.g. \"outputs/metrics.jsonl\"");
    }
    if (value.contains("tensorboard") && value["tensorboard"] == true) {
      return InvalidArgument(name + ": \"metrics_file\" and \"tensorboard\": true name two sources of the same values")
          .WithHint("keep the one the trainer writes at full precision");
    }
    c.tensorboard = false;
    // Runs side by side in one worktree would write (and parity would move) the same file.
    if (max_parallel.value_or(1) > 1) {
      return InvalidArgument(name + ".metrics_file: needs \"max_parallel\": 1 (runs side by side in one worktree "
                             "would write the same file)")
          .WithHint("set \"max_parallel\": 1, or let the trainer write TensorBoard into a folder parity names "
                    "(\"tensorboard\": true)");
    }
  }
  c.max_parallel = max_parallel.value_or(c.executor == "slurm" && !c.metrics_file ? 16 : 1);
  if (!c.mail.is_null() && !c.mail.is_object()) return InvalidArgument(name + ".mail: expected object or null");
  fs::path repo_path = repo;
  c.repo = fs::absolute(repo_path.is_relative() ? base / repo_path : repo_path).lexically_normal();
  fs::path rd = report_dir.empty() ? c.repo / "numerical_report" : fs::path(report_dir);
  c.report_dir = fs::absolute(rd.is_relative() ? base / rd : rd).lexically_normal();
  if (cache_dir) c.cache.dir = fs::absolute(fs::path(*cache_dir).is_relative() ? base / *cache_dir : fs::path(*cache_dir)).lexically_normal();
  return c;
}

Result<PremergeConfig> ReadPremergeConfig(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the premerge config " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (buf.str().size() > (4u << 20)) return InvalidArgument(path.string() + ": larger than 4 MiB");
  PARITY_ASSIGN_OR_RETURN(nlohmann::json value, ParseJsonDocument(buf.str(), path.string()));
  return ParsePremergeConfig(value, path.filename().string(), fs::absolute(path).parent_path());
}

json TrainingStartArgs(const PremergeConfig& c, const MatrixEntry& entry, const std::string& phase,
                       const std::string& worktree) {
  json args = {{"action", "start"}, {"phase", phase}, {"worktree", worktree}, {"config", entry.name}};
  if (c.model) args["model"] = *c.model;
  if (c.launcher) args["launcher"] = *c.launcher;
  if (c.script) args["script"] = *c.script;
  if (c.dataset_path) args["dataset_path"] = *c.dataset_path;
  if (!c.env.empty()) args["env"] = c.env;
  if (c.timeout_s > 0) args["timeout_s"] = c.timeout_s;
  if (c.executor != "local") args["executor"] = c.executor;
  std::vector<std::string> extra = entry.extra_args;
  if (c.tokenizer) extra.push_back("--model.tokenizer_path=" + *c.tokenizer);
  if (!extra.empty()) args["extra_args"] = extra;
  return args;
}

}  // namespace parity::workflow
