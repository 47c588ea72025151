// Replay of a reproduce.json (parity reproduce): see reproduce.h.
#include <algorithm>
#include <iterator>
#include <system_error>

#include "domain/report/reproduce.h"
#include "support/subprocess.h"

namespace parity::report {

namespace fs = std::filesystem;

namespace {

// Rewrites recorded paths to their place in the rerun, longest prefix first, in one pass so
// a replaced path is never rewritten again.
class PathMap {
 public:
  void Add(const std::string& from, const fs::path& to) {
    if (!from.empty()) pairs_.emplace_back(from, to.string());
    std::sort(pairs_.begin(), pairs_.end(), [](auto& a, auto& b) { return a.first.size() > b.first.size(); });
  }
  std::string Apply(const std::string& s) const {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      bool hit = false;
      for (const auto& [from, to] : pairs_) {
        if (s.compare(i, from.size(), from) == 0) {
          out += to;
          i += from.size();
          hit = true;
          break;
        }
      }
      if (!hit) out += s[i++];
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;
};

// The part of a file or folder name before its first digit: what stays when a name is
// stamped with a time, host and pid (TensorBoard's events.out.tfevents.<time>.<host>.<pid>.0,
// torchtitan's <date>-<time> folders).
std::string StampPrefix(const std::string& name) { return name.substr(0, name.find_first_of("0123456789")); }

// A recorded input under the rerun's report directory that the rerun wrote under another
// run-stamped name: below the nearest folder that exists, the one path of the same depth
// whose every part starts like the recorded one. Anything else is an error naming both.
Result<fs::path> ResolveStamped(const fs::path& wanted, const fs::path& report_dir) {
  fs::path base = wanted.parent_path();
  std::error_code ec;
  while (!fs::is_directory(base, ec) && base.has_relative_path() && base != report_dir) base = base.parent_path();
  auto fail = [&](const std::string& why) {
    return NotFound("the recorded input " + wanted.string() + " is not in the rerun, " + why)
        .WithHint("the step that writes it must run before this one; check the replayed steps' logs in " +
                  (report_dir / "replay").string());
  };
  if (base == report_dir || !fs::is_directory(base, ec)) return fail("and nothing in the rerun stands in for it");
  std::vector<std::string> parts;
  for (const auto& p : wanted.lexically_relative(base)) parts.push_back(StampPrefix(p.string()));
  std::vector<fs::path> found;
  for (fs::recursive_directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    auto rel = it->path().lexically_relative(base);
    size_t depth = std::distance(rel.begin(), rel.end());
    if (depth > parts.size()) {
      it.disable_recursion_pending();
      continue;
    }
    size_t i = 0;
    bool match = true;
    for (const auto& part : rel) match = match && part.string().rfind(parts[i++], 0) == 0;
    if (!match) it.disable_recursion_pending();
    else if (depth == parts.size() && !it->is_directory(ec)) found.push_back(it->path());
  }
  if (found.size() == 1) return found[0];
  std::string list;
  for (const auto& f : found) list += " " + f.string();
  return fail(found.empty() ? "and no file under " + base.string() + " is named like it"
                            : "and several files could stand in for it:" + list);
}

// `parity call TOOL ARGUMENTS`: inputs that earlier steps wrote under run-stamped names are
// looked up again in the rerun, and said so.
Status ResolveCallInputs(std::vector<std::string>& argv, const fs::path& report_dir,
                         const std::function<void(const std::string&)>& print) {
  if (argv.size() < 4 || argv[1] != "call") return Status::Ok();
  json args = json::parse(argv[3], nullptr, /*allow_exceptions=*/false);
  if (!args.is_object()) return InvalidArgument("the recorded arguments of parity call " + argv[2] + " are not a JSON object");
  const std::string root = report_dir.string() + "/";
  auto resolve = [&](json& value, const std::string& name) -> Status {
    if (!value.is_string()) return Status::Ok();
    std::string path = value;
    std::error_code ec;
    if (path.rfind(root, 0) != 0 || fs::exists(path, ec)) return Status::Ok();
    auto resolved = ResolveStamped(path, report_dir);
    if (!resolved.ok()) return std::move(resolved).take_status().Context(name + " of parity call " + argv[2]);
    if (print) print("   " + name + ": " + path + " was written as " + resolved->string() + " in the rerun\n");
    value = resolved->string();
    return Status::Ok();
  };
  // A path, a list of them (parse_log's paths), or an object holding them (compare_logs'
  // noise.runs).
  std::function<Status(json&, const std::string&)> walk = [&](json& value, const std::string& name) -> Status {
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) PARITY_RETURN_IF_ERROR(walk(value[i], name + "[" + std::to_string(i) + "]"));
      return Status::Ok();
    }
    if (value.is_object()) {
      for (auto& [key, inner] : value.items()) PARITY_RETURN_IF_ERROR(walk(inner, name + "." + key));
      return Status::Ok();
    }
    return resolve(value, name);
  };
  for (auto& [key, value] : args.items()) PARITY_RETURN_IF_ERROR(walk(value, "arguments." + key));
  argv[3] = args.dump();
  return Status::Ok();
}

ProcessOptions Cmd(std::vector<std::string> argv) {
  ProcessOptions p;
  p.argv = std::move(argv);
  return p;
}

Status Run(const ReplayOptions& o, ProcessOptions p, const std::string& what) {
  p.cancel = o.cancel;
  p.merge_stderr = true;
  if (o.print) o.print("$ " + ShellQuote(p.argv) + (p.cwd.empty() ? "" : "    (in " + p.cwd.string() + ")") + "\n");
  if (o.dry_run) return Status::Ok();
  if (o.print) p.on_output = [&o](std::string_view chunk) { o.print(std::string(chunk)); };
  auto result = RunProcess(p);
  if (!result.ok()) return std::move(result).take_status().Context(what);
  if (!result->success()) return ProcessFailure(what, p, *result);
  return Status::Ok();
}

}  // namespace

Status Replay(const ReplayOptions& o) {
  auto loaded = ReadJsonFile(o.reproduce_json);
  if (!loaded.ok()) return std::move(loaded).take_status();
  const json r = std::move(loaded).value();
  PARITY_RETURN_IF_ERROR(ValidateReproduce(r, /*check_world=*/false));

  std::error_code ec;
  if (fs::exists(o.work_dir, ec) && !fs::is_empty(o.work_dir, ec)) {
    return FailedPrecondition("work directory " + o.work_dir.string() + " exists and is not empty")
        .WithHint("pass a new directory; the rerun creates worktrees and a report directory inside it");
  }
  const fs::path work = fs::absolute(o.work_dir);
  const fs::path repo_dir = work / "repo";
  const fs::path report_dir = work / "numerical_report";
  std::map<std::string, fs::path> worktree = {{"baseline", work / "worktrees" / "baseline"},
                                              {"candidate", work / "worktrees" / "candidate"}};
  if (!o.dry_run) {
    fs::create_directories(report_dir / "replay", ec);
    fs::create_directories(work / "worktrees", ec);
    if (ec) return Unavailable("cannot create " + report_dir.string() + ": " + ec.message());
  }

  // The repository: a local copy when the recorded one is here, else its clone URL.
  const std::string recorded_repo = r["repo"]["path"];
  const std::string source = fs::is_directory(recorded_repo) ? recorded_repo : r["repo"]["clone_url"].get<std::string>();
  PARITY_RETURN_IF_ERROR(Run(o, Cmd({"git", "clone", "--quiet", "--no-checkout", source, repo_dir.string()}),
                             "cloning " + source));
  for (const char* side : {"baseline", "candidate"}) {
    std::string commit = r[side]["commit"];
    PARITY_RETURN_IF_ERROR(Run(o,
                               Cmd({"git", "-C", repo_dir.string(), "worktree", "add", "--quiet", "--detach",
                                         worktree[side].string(), commit}),
                               std::string("creating the ") + side + " worktree at " + commit));
  }

  // The recorded refs, pointing where they pointed then, so steps that name them (a hunk
  // lookup between baseline and candidate refs) resolve in the clone as they did.
  for (const char* side : {"baseline", "candidate"}) {
    if (!r[side]["ref"].is_string()) continue;
    std::string ref = r[side]["ref"];
    if (ref == "HEAD" || ref.find_first_of("~^:") != std::string::npos) continue;
    PARITY_RETURN_IF_ERROR(Run(o, Cmd({"git", "-C", repo_dir.string(), "update-ref", "refs/heads/" + ref,
                                       r[side]["commit"].get<std::string>()}),
                               std::string("recreating the ") + side + " ref " + ref));
  }

  // Infra files go into both worktrees, as audit_workspace did.
  if (r["infra"]["tarball"].is_string()) {
    std::string rel = r["infra"]["tarball"];
    fs::path tarball = fs::path(r["report_dir"].get<std::string>()) / rel;
    if (!fs::exists(tarball)) tarball = o.reproduce_json.parent_path().parent_path() / rel;  // shipped report dir
    if (!fs::exists(tarball)) {
      return NotFound("infra tarball " + rel + " not found beside " + r["report_dir"].get<std::string>() +
                      " or beside " + o.reproduce_json.parent_path().parent_path().string())
          .WithHint("copy infra_files.tar.gz next to the report/ folder that holds reproduce.json");
    }
    for (const char* side : {"baseline", "candidate"}) {
      PARITY_RETURN_IF_ERROR(Run(o, Cmd({"tar", "-xzf", tarball.string(), "-C", worktree[side].string()}),
                                 std::string("extracting infra files into the ") + side + " worktree"));
    }
  }

  PathMap map;
  map.Add(r["report_dir"], report_dir);
  map.Add(recorded_repo, repo_dir);
  for (const char* side : {"baseline", "candidate"}) {
    if (r[side]["worktree"].is_string()) map.Add(r[side]["worktree"], worktree[side]);
  }
  std::string parity = o.parity_binary.empty() ? fs::read_symlink("/proc/self/exe", ec).string() : o.parity_binary;

  const json& steps = r["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    if (o.cancel.cancelled()) return Cancelled();
    const json& s = steps[i];
    std::string what = "step " + std::to_string(i + 1) + "/" + std::to_string(steps.size()) + " " +
                       s["id"].get<std::string>() + " (" + s["tool"].get<std::string>() + " " +
                       s["action"].get<std::string>() + (s["side"].is_string() ? " " + s["side"].get<std::string>() : "") + ")";
    if (s["host"] != "local") {
      return FailedPrecondition(what + " ran on host " + s["host"].get<std::string>() +
                                "; parity reproduce replays local steps only")
          .WithHint("run it on that host by hand: " + ShellQuote(s["argv"].get<std::vector<std::string>>()));
    }
    ProcessOptions p;
    for (const auto& a : s["argv"]) p.argv.push_back(map.Apply(a.get<std::string>()));
    if (p.argv[0] == "parity") p.argv[0] = parity;
    p.cwd = map.Apply(s["cwd"].get<std::string>());
    for (const auto& [k, v] : s["env"].items()) p.env_set[k] = map.Apply(v.get<std::string>());
    // The output goes where the original run's log went (later steps, such as the compare,
    // read it there), or to replay/<id>.log for steps that recorded no log.
    const json& log = s["outputs"].value("log", json());
    p.tee_path = log.is_string() ? report_dir / log.get<std::string>()
                                 : report_dir / "replay" / (s["id"].get<std::string>() + ".log");
    if (o.print) o.print("== " + what + "\n");
    // Everything the rerun does happens inside the work directory: a step whose recorded
    // place maps nowhere (a folder the ledger does not name as repository, worktree or report
    // directory) is refused rather than run where the original ran.
    const std::string inside = work.string() + "/";
    std::vector<std::string> places = {p.cwd.string()};
    if (s["action"] == "clear_checkpoint" || s["action"] == "move_checkpoint") {
      for (size_t k = 1; k < p.argv.size(); ++k)
        if (!p.argv[k].empty() && p.argv[k][0] == '/') places.push_back(p.argv[k]);
    }
    for (const auto& place : places) {
      if ((place + "/").rfind(inside, 0) != 0) {
        return FailedPrecondition(what + ": " + place + " is outside the work directory " + work.string() +
                                  " (the recorded path is not under the repository, a worktree or the report directory)")
            .WithHint("run this step by hand if it is safe: " + ShellQuote(s["argv"].get<std::vector<std::string>>()));
      }
    }
    if (!o.dry_run && !fs::is_directory(p.cwd)) {
      return NotFound(what + ": working directory " + p.cwd.string() + " does not exist in the rerun");
    }
    if (!o.dry_run && p.argv[0] == parity) PARITY_RETURN_IF_ERROR(ResolveCallInputs(p.argv, report_dir, o.print).Context(what));
    // The rerun's parity call reads and writes the work directory, which the user named.
    if (p.argv.size() >= 2 && p.argv[0] == parity && p.argv[1] == "call") {
      p.argv.insert(p.argv.end(), {"--allow-folder", work.string()});
    }
    if (!o.dry_run) {
      if (!o.authorize) return FailedPrecondition(what + ": no policy to check the step against; nothing was run");
      PARITY_RETURN_IF_ERROR(o.authorize(s, p).Context(what));
    }
    PARITY_RETURN_IF_ERROR(Run(o, std::move(p), what));
  }
  if (o.print) o.print("replayed " + std::to_string(steps.size()) + " steps; outputs in " + report_dir.string() + "\n");
  return Status::Ok();
}

}  // namespace parity::report
