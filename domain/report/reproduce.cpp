#include "domain/report/reproduce.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include <git2.h>

#include "domain/run/launch.h"
#include "support/json_reader.h"
#include "support/redact.h"

namespace parity::report {

namespace fs = std::filesystem;

namespace {

// Tools that run inside parity (no child process): replayed with `parity call`.
const std::set<std::string> kInProcessTools = {"compare_logs", "parse_log", "msprobe_first_diff"};
// Actions whose effect Replay recreates itself (fresh worktrees, infra extraction) or that
// belong to reporting, not to the experiment. Probes are evidence, shown in the environment section.
const std::set<std::string> kSetupActions = {"audit", "worktree_add", "infra_copy", "cleanup", "probe", "render", "mail"};

bool IsHex40(const std::string& s) {
  static const std::regex kHex("^[0-9a-f]{40}$");
  return std::regex_match(s, kHex);
}

// A value someone meant to fill in later.
bool LooksLikePlaceholder(const std::string& s) {
  static const std::regex kAngle("<[A-Za-z_][A-Za-z0-9_ -]*>");
  static const std::set<std::string> kWords = {"TODO", "TBD", "FIXME", "xxx", "XXX", "...", "?", "placeholder"};
  return std::regex_search(s, kAngle) || kWords.count(s) > 0;
}

// Walks every string in `value`, refusing empty ones and placeholders.
// Environment values may legitimately be empty (VAR= unsets a default in many launchers).
Status CheckStrings(const json& value, const std::string& path, bool allow_empty = false) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (s.empty() && !allow_empty) return InvalidArgument(path + ": empty value");
    if (LooksLikePlaceholder(s)) return InvalidArgument(path + ": placeholder value \"" + s + "\"");
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      PARITY_RETURN_IF_ERROR(CheckStrings(value[i], path + "[" + std::to_string(i) + "]"));
    }
  } else if (value.is_object()) {
    bool env = path.size() >= 4 && path.compare(path.size() - 4, 4, ".env") == 0;
    for (const auto& [k, v] : value.items()) PARITY_RETURN_IF_ERROR(CheckStrings(v, path + "." + k, env));
  }
  return Status::Ok();
}

struct GitRepo {
  git_repository* repo = nullptr;
  GitRepo() { git_libgit2_init(); }
  ~GitRepo() {
    if (repo) git_repository_free(repo);
    git_libgit2_shutdown();
  }
};

std::string GitError() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

Status OpenRepo(GitRepo& g, const std::string& path, const std::string& field) {
  if (git_repository_open(&g.repo, path.c_str()) != 0) {
    return NotFound(field + ": " + path + " is not a git repository (" + GitError() + ")");
  }
  return Status::Ok();
}

Status CheckCommit(GitRepo& g, const std::string& commit, const std::string& field) {
  git_oid oid;
  git_commit* c = nullptr;
  if (git_oid_fromstr(&oid, commit.c_str()) != 0 || git_commit_lookup(&c, g.repo, &oid) != 0) {
    return NotFound(field + ": commit " + commit + " is not in the repository");
  }
  git_commit_free(c);
  return Status::Ok();
}

json Remotes(GitRepo& g) {
  json remotes = json::array();
  git_strarray names{};
  if (git_remote_list(&names, g.repo) != 0) return remotes;
  for (size_t i = 0; i < names.count; ++i) {
    git_remote* r = nullptr;
    if (git_remote_lookup(&r, g.repo, names.strings[i]) == 0) {
      const char* url = git_remote_url(r);
      if (url && *url) remotes.push_back({{"name", names.strings[i]}, {"url", RedactUrlCredentials(url)}});
      git_remote_free(r);
    }
  }
  git_strarray_dispose(&names);
  return remotes;
}

// Remotes whose remote-tracking branches contain `commit`: where a stranger can fetch it.
json RemotesContaining(GitRepo& g, const json& remotes, const std::string& commit) {
  json names = json::array();
  git_oid want;
  if (git_oid_fromstr(&want, commit.c_str()) != 0) return names;
  for (const auto& r : remotes) {
    std::string glob = "refs/remotes/" + r["name"].get<std::string>() + "/*";
    git_reference_iterator* it = nullptr;
    if (git_reference_iterator_glob_new(&it, g.repo, glob.c_str()) != 0) continue;
    git_reference* ref = nullptr;
    bool found = false;
    while (!found && git_reference_next(&ref, it) == 0) {
      git_reference* resolved = nullptr;
      if (git_reference_resolve(&resolved, ref) == 0) {
        const git_oid* tip = git_reference_target(resolved);
        found = tip && (git_oid_equal(tip, &want) || git_graph_descendant_of(g.repo, tip, &want) == 1);
        git_reference_free(resolved);
      }
      git_reference_free(ref);
    }
    git_reference_iterator_free(it);
    if (found) names.push_back(r["name"]);
  }
  return names;
}

// Where the launcher left the initial checkpoint that run_training then moved into the
// report directory (torchtitan: outputs/checkpoint/step-1), as run_training decides it; empty
// when the launcher saves there itself.
std::string CheckpointToMove(const json& inputs) {
  run::LaunchRequest r;
  r.launcher = inputs.value("launcher", std::string("torchtitan"));
  r.phase = "gen_ckpt";
  r.script = inputs.value("script", std::string());
  r.model = inputs.value("model", std::string());
  r.config = inputs.value("config", std::string());
  r.checkpoint_dir = inputs.value("checkpoint_dir", std::string());
  auto launch = run::BuildLaunch(r);
  return launch.ok() && launch->checkpoint_to_move ? *launch->checkpoint_to_move : std::string();
}

// run_training acts around its command without recording a command of its own: it clears
// the checkpoint folder (the skill's rm -rf outputs/checkpoint, recorded in
// inputs.cleared_checkpoint_folder) and moves a new initial checkpoint into the report
// directory (outputs.checkpoint). A rerun needs both, so they become steps of their own.
void AddTrainingSideSteps(const json& e, const json& step, json& steps, bool after, const fs::path& report_dir) {
  const json inputs = e.value("inputs", json::object());
  auto derived = [&](const char* suffix, const char* action, std::vector<std::string> argv) {
    json s = step;
    s["id"] = step["id"].get<std::string>() + suffix;
    s["action"] = action;
    s["env"] = json::object();
    s["argv"] = std::move(argv);
    s["outputs"] = json::object();
    steps.push_back(std::move(s));
  };
  if (!after) {
    if (inputs.value("cleared_checkpoint_folder", json()).is_string()) {
      derived(".clear", "clear_checkpoint", {"rm", "-rf", "--", inputs["cleared_checkpoint_folder"]});
    }
    return;
  }
  const json outputs = e.value("outputs", json::object());
  if (e.value("action", "") != "gen_ckpt" || !outputs.value("checkpoint", json()).is_string()) return;
  std::string from = CheckpointToMove(inputs);
  if (from.empty()) return;
  std::string to = inputs.value("checkpoint_dir", json()).is_string()
                       ? inputs["checkpoint_dir"].get<std::string>()
                       : (report_dir / outputs["checkpoint"].get<std::string>()).string();
  derived(".move", "move_checkpoint", {"mv", "-T", "--", step["cwd"].get<std::string>() + "/" + from, to});
}

std::string EntryName(const json& e, size_t index) {
  return "manifest.json entries[" + std::to_string(index) + "] (" + e.value("id", std::string("no id")) + ")";
}

}  // namespace

Result<json> BuildReproduce(const ReportModel& model, const std::string& generated_at) {
  if (!model.manifest.is_object()) {
    return NotFound("no ledger (manifest.json) in " + model.report_dir.string() +
                    ", so there is nothing to reproduce from")
        .WithHint("run the workflow's tools (run_training, compare_logs) with this report_dir, or leave "
                  "\"reproduce\" out of formats");
  }
  const json& entries = model.manifest["entries"];
  // The directory the recorded commands wrote to (and Replay maps), as the ledger says; the
  // in-process calls are replayed into the same place, never into a copy's own folder.
  const std::string recorded_dir = model.manifest.value("report_dir", json()).is_string()
                                       ? model.manifest["report_dir"].get<std::string>()
                                       : model.report_dir.string();
  json sides = json::object();
  std::string repo_path;
  json environment = json::object();
  json steps = json::array();

  for (size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const std::string name = EntryName(e, i);
    if (!e.is_object()) return InvalidArgument(name + ": expected object");
    json outcome = e.value("outcome", json::object());
    if (!outcome.is_object() || outcome.value("status", "") != "ok") continue;
    std::string side = e.contains("side") && e["side"].is_string() ? e["side"].get<std::string>() : "";

    if (e.contains("git") && e["git"].is_object()) {
      const json& git = e["git"];
      if (git.contains("repo") && git["repo"].is_string()) {
        std::string repo = git["repo"];
        if (!repo_path.empty() && repo != repo_path) {
          return InvalidArgument(name + ".git.repo: " + repo + " differs from the repository of earlier entries (" +
                                 repo_path + ")");
        }
        repo_path = repo;
      }
      if ((side == "baseline" || side == "candidate") && git.contains("commit")) {
        json s = {{"ref", git.value("ref", json())}, {"commit", git["commit"]}, {"worktree", git.value("worktree", json())}};
        if (sides.contains(side) && sides[side]["commit"] != s["commit"]) {
          return InvalidArgument(name + ".git.commit: " + s["commit"].dump() + " differs from the " + side +
                                 " commit of earlier entries (" + sides[side]["commit"].dump() + ")");
        }
        if (!sides.contains(side) || sides[side]["worktree"].is_null()) sides[side] = s;
      }
    }
    if (e.contains("environment") && e["environment"].is_object() && e["environment"].contains("summary")) {
      environment[side.empty() ? "shared" : side] = e["environment"]["summary"];
    }

    std::string tool = e.value("tool", std::string());
    std::string action = e.value("action", std::string());
    if (kSetupActions.count(action)) continue;
    json step = {{"id", e.value("id", json())}, {"tool", tool}, {"action", action},
                 {"side", e.value("side", json())}, {"config", e.value("config", json())}};
    if (e.contains("command") && e["command"].is_object()) {
      const json& c = e["command"];
      step["host"] = c.value("host", std::string("local"));
      step["cwd"] = c.value("cwd", json());
      step["env"] = c.value("env", json::object());
      step["argv"] = c.value("argv", json());
    } else if (kInProcessTools.count(tool)) {
      if (!e.contains("inputs") || !e["inputs"].is_object() || e["inputs"].empty()) {
        return InvalidArgument(name + ".inputs: missing; without the arguments the " + tool +
                               " call cannot be reproduced");
      }
      step["host"] = "local";
      step["cwd"] = recorded_dir;
      step["env"] = json::object();
      step["argv"] = {"parity", "call", tool, e["inputs"].dump(), "--report-dir", recorded_dir};
    } else {
      continue;  // acted without a process and without effects to replay (e.g. an in-process probe)
    }
    step["outputs"] = e.contains("outputs") && e["outputs"].is_object() ? e["outputs"] : json::object();
    // A baseline run the premerge reused from its cache is replayed as the training it was.
    const bool training = (tool == "run_training" || outcome.value("from_cache", false)) && step["cwd"].is_string();
    if (training) AddTrainingSideSteps(e, step, steps, /*after=*/false, recorded_dir);
    steps.push_back(step);
    if (training) AddTrainingSideSteps(e, step, steps, /*after=*/true, recorded_dir);
  }

  if (repo_path.empty()) {
    return InvalidArgument("manifest.json: no entry records git.repo, so the repository to clone is unknown")
        .WithHint("run audit_workspace and run_training with this report_dir");
  }
  for (const char* side : {"baseline", "candidate"}) {
    if (!sides.contains(side)) {
      return InvalidArgument(std::string("manifest.json: no successful entry with side \"") + side +
                             "\" records git.commit, so the " + side + " commit is unknown")
          .WithHint("run run_training for both sides with this report_dir");
    }
  }
  if (steps.empty()) return InvalidArgument("manifest.json: no successful command to reproduce");

  GitRepo g;
  PARITY_RETURN_IF_ERROR(OpenRepo(g, repo_path, "manifest.json git.repo"));
  json remotes = Remotes(g);
  json warnings = json::array();
  for (const char* side : {"baseline", "candidate"}) {
    PARITY_RETURN_IF_ERROR(CheckCommit(g, sides[side]["commit"], std::string("manifest.json ") + side + " git.commit"));
    sides[side]["on_remotes"] = RemotesContaining(g, remotes, sides[side]["commit"]);
  }
  // Clone from a remote that has both commits (origin first); otherwise only this machine's
  // repository can serve them, and the reader is told what to push.
  std::string clone_url;
  for (int pass = 0; pass < 2 && clone_url.empty(); ++pass) {
    for (const auto& r : remotes) {
      bool both = true;
      for (const char* side : {"baseline", "candidate"}) {
        const json& on = sides[side]["on_remotes"];
        both = both && std::find(on.begin(), on.end(), r["name"]) != on.end();
      }
      if (both && (pass == 1 || r["name"] == "origin")) {
        clone_url = r["url"];
        break;
      }
    }
  }
  if (clone_url.empty()) {
    clone_url = repo_path;
    for (const char* side : {"baseline", "candidate"}) {
      if (!sides[side]["on_remotes"].empty()) continue;
      std::string ref = sides[side]["ref"].is_string() ? sides[side]["ref"].get<std::string>() : "the commit";
      warnings.push_back(std::string("the ") + side + " commit " + sides[side]["commit"].get<std::string>() +
                         " is on no remote, so only " + repo_path + " has it: push " + ref +
                         " before handing this file to someone else");
    }
    if (warnings.empty()) {
      warnings.push_back("no single remote has both commits; clone_url is the local repository " + repo_path);
    }
  }

  json infra = {{"tarball", nullptr}, {"files", model.infra_files}};
  if (!model.infra_tarball.empty()) infra["tarball"] = model.infra_tarball.lexically_relative(model.report_dir).string();

  json out = {{"schema", kReproduceSchema},
              {"generated", generated_at},
              {"report_dir", recorded_dir},
              {"repo", {{"path", repo_path}, {"clone_url", clone_url}, {"remotes", remotes}}},
              {"baseline", sides["baseline"]},
              {"candidate", sides["candidate"]},
              {"infra", infra},
              {"environment", environment},
              {"warnings", warnings},
              {"steps", steps}};
  Status s = ValidateReproduce(out, /*check_world=*/true);
  if (!s.ok()) {
    return std::move(s).Context("reproduce.json built from " + (model.report_dir / "manifest.json").string() +
                                " is incomplete");
  }
  return out;
}

Status ValidateReproduce(const json& r, bool check_world) {
  std::string schema, generated, report_dir;
  JsonReader top(r, "reproduce");
  top.Required("schema", schema).Required("generated", generated).Required("report_dir", report_dir);
  top.Object("repo", true, [](JsonReader& repo) {
    std::string path, url;
    json remotes;
    repo.Required("path", path).Required("clone_url", url).Required("remotes", remotes);
  });
  for (const char* side : {"baseline", "candidate"}) {
    top.Object(side, true, [](JsonReader& s) {
      std::string commit;
      std::optional<std::string> ref, worktree;
      std::vector<std::string> on_remotes;
      s.Required("commit", commit).Optional("ref", ref).Optional("worktree", worktree);
      s.Required("on_remotes", on_remotes);
      if (s.ok() && !IsHex40(commit)) s.Fail(s.Child("commit"), "\"" + commit + "\" is not a 40-digit commit hash");
    });
  }
  top.Object("infra", true, [](JsonReader& infra) {
    std::optional<std::string> tarball;
    std::vector<std::string> files;
    infra.Optional("tarball", tarball).Required("files", files);
  });
  json environment, steps;
  std::vector<std::string> warnings;
  top.Required("environment", environment).Required("steps", steps).Required("warnings", warnings);
  PARITY_RETURN_IF_ERROR(top.Finish());
  if (schema != kReproduceSchema) return InvalidArgument(std::string("reproduce.schema: expected \"") + kReproduceSchema + "\"");
  if (!steps.is_array() || steps.empty()) return InvalidArgument("reproduce.steps: expected a non-empty array");
  for (size_t i = 0; i < steps.size(); ++i) {
    JsonReader s(steps[i], "reproduce.steps[" + std::to_string(i) + "]");
    std::string id, tool, action, host, cwd;
    std::optional<std::string> side, config;
    std::map<std::string, std::string> env;
    std::vector<std::string> argv;
    json outputs;
    s.Required("id", id).Required("tool", tool).Required("action", action).Optional("side", side);
    s.Optional("config", config).Required("host", host).Required("cwd", cwd).Required("env", env);
    s.Required("argv", argv).Required("outputs", outputs);
    if (s.ok() && argv.empty()) s.Fail(s.Child("argv"), "empty command");
    if (s.ok() && !fs::path(cwd).is_absolute()) s.Fail(s.Child("cwd"), "\"" + cwd + "\" is not an absolute path");
    PARITY_RETURN_IF_ERROR(s.Finish());
  }
  // Present but empty, or a placeholder, is as bad as missing. Nulls are allowed only
  // where the schema has them (ref, worktree, side, config, tarball).
  json checked = r;
  checked.erase("environment");  // probe output, reported as found
  PARITY_RETURN_IF_ERROR(CheckStrings(checked, "reproduce"));
  if (!r["infra"]["files"].empty() && r["infra"]["tarball"].is_null()) {
    return InvalidArgument("reproduce.infra.tarball: missing while infra.files lists files");
  }

  if (check_world) {
    GitRepo g;
    std::string repo = r["repo"]["path"];
    PARITY_RETURN_IF_ERROR(OpenRepo(g, repo, "reproduce.repo.path"));
    for (const char* side : {"baseline", "candidate"}) {
      PARITY_RETURN_IF_ERROR(CheckCommit(g, r[side]["commit"], std::string("reproduce.") + side + ".commit"));
    }
  }
  return Status::Ok();
}

}  // namespace parity::report
