// Hunt's sides: where each side's code comes from (its repository, or the shadow), its
// worktrees, its command and runs, and what a remote side's runs wrote, fetched back.
#include <chrono>

#include "domain/workflow/hunt_loop.h"
#include "domain/workflow/hunt_remote.h"
#include "domain/workflow/hunt_shadow.h"
#include "domain/workflow/run_worktrees.h"
#include "domain/workflow/tensorboard_run.h"
#include "support/safe_file.h"

namespace parity::workflow::hunt_internal {

Status Hunt::ResolveSources() {
  for (Side* s : {&base_, &cand_}) {
    if (s->config->mode == "remote") {
      PARITY_ASSIGN_OR_RETURN(run::SshTarget target, HuntSshTarget(c_, *s->config, s->key));
      PARITY_ASSIGN_OR_RETURN(s->host, ConnectSide(target, SideWhere(c_, *s->config, s->key)));
      s->ssh = target;
    }
    PARITY_ASSIGN_OR_RETURN(s->source, ResolveSideSource(c_, *s->config, s->key, HostOf(*s), o_.cancel));
  }
  const bool same_host = base_.remote() == cand_.remote() &&
                         (!base_.remote() || base_.host->Describe() == cand_.host->Describe());
  if (!same_host || base_.source.top != cand_.source.top) {
    PARITY_RETURN_IF_ERROR(CheckBaselineClean(HostOf(base_), base_.source, o_.cancel));
  }
  shadow_ = base_.remote() || cand_.remote() || base_.source.common != cand_.source.common;
  if (!shadow_) {
    repo_ = {cand_.source.top, base_.source.commit, cand_.source.commit};
    return Status::Ok();
  }
  std::vector<std::string> skip;  // the report directory may lie inside a local test tree
  if (!cand_.remote()) {
    fs::path rel = o_.report_dir.lexically_normal().lexically_relative(fs::path(cand_.source.top).lexically_normal());
    if (!rel.empty() && *rel.begin() != "..") skip.push_back(rel.generic_string());
  }
  PARITY_ASSIGN_OR_RETURN(auto carried, ListUncommitted(HostOf(cand_), cand_.source, skip, o_.cancel));
  obs_.Note("shadow repository: both trees" + std::string(carried.empty() ? "" : " and the test tree's " +
            std::to_string(carried.size()) + " uncommitted file(s)") + " copied from their hosts");
  PARITY_ASSIGN_OR_RETURN(ShadowRepo shadow, BuildShadowRepo(o_.report_dir / "hunt" / "shadow",
                                                             {&HostOf(base_), base_.source}, {&HostOf(cand_), cand_.source},
                                                             carried, o_.cancel));
  for (const auto& w : shadow.warnings) Warn(w);
  json origin, files = json::array();
  for (Side* s : {&base_, &cand_}) {
    origin[s->key] = {{"host", HostOf(*s).Describe()}, {"code_path", s->config->code_path}, {"top", s->source.top},
                      {"commit", s->source.commit}, {"tree", s->source.tree}};
  }
  for (const auto& f : shadow.carried) files.push_back({{"path", f.path}, {"state", f.state}});
  hunt_["shadow"] = {{"repo", shadow.path.string()},
                     {"commits", {{"baseline", shadow.baseline_commit}, {"candidate", shadow.candidate_commit}}},
                     {"trees", {{"baseline", shadow.baseline_tree}, {"candidate", shadow.candidate_tree}}},
                     {"origin", origin}, {"uncommitted", files}};
  repo_ = {shadow.path, shadow.baseline_commit, shadow.candidate_commit};
  return Status::Ok();
}

Status Hunt::Worktrees() {
  json args = {{"action", "diff"}, {"repo", repo_.repo.string()}, {"baseline", repo_.baseline_commit},
               {"candidate", repo_.candidate_commit}};
  PARITY_ASSIGN_OR_RETURN(json diff, Call("audit_workspace", args));
  std::map<std::string, std::string> classes;
  json unconfirmed = json::array();
  for (const auto& f : diff["diff"]["files"]) {
    classes[f["path"]] = f["proposed"];
    // Copying the user's uncommitted files into a worktree needs consent; leaving one out
    // (the report directory, deletions, non-code files) changes nothing.
    if (f.value("origin", "") != "committed" && f.value("proposed", "") != "ignore") {
      unconfirmed.push_back({{"path", f["path"]}, {"proposed", f["proposed"]}, {"reason", f.value("reason", "")}});
    }
  }
  if (!unconfirmed.empty() && !o_.assume_yes && !o_.steps_ask_user) {
    return FailedPrecondition("the test tree has " + std::to_string(unconfirmed.size()) +
                              " uncommitted file(s) that parity proposes to copy into the worktrees (B: both "
                              "sides, C: test only); that needs the user's confirmation, and nothing was created or run")
        .WithHint("run again with --yes to accept the proposed classes listed, or commit the files")
        .WithEvidence("found", unconfirmed.dump(2));
  }
  for (const auto& u : unconfirmed) obs_.Note("class " + u["proposed"].get<std::string>() + ": " + u["path"].get<std::string>());
  std::string stem = repo_.repo.filename().string();
  base_.worktree = repo_.repo.parent_path() / (stem + "-hunt-baseline");
  cand_.worktree = repo_.repo.parent_path() / (stem + "-hunt-candidate");
  args = {{"action", "prepare"}, {"repo", repo_.repo.string()}, {"baseline", repo_.baseline_commit},
          {"candidate", repo_.candidate_commit}, {"classes", classes},
          {"baseline_path", base_.worktree.string()}, {"candidate_path", cand_.worktree.string()}};
  // Absent, audit_workspace asks the user whether an earlier run's worktrees may go.
  if (o_.assume_yes || !o_.steps_ask_user) args["remove_stale"] = o_.assume_yes;
  auto called = Call("audit_workspace", args);
  if (!called.ok() && IsStaleWorktreesRefusal(called.status())) {
    return StaleWorktreesNeedConsent(std::move(called).take_status(), "run again with --yes", repo_.repo, o_.report_dir);
  }
  PARITY_ASSIGN_OR_RETURN(json prepared, std::move(called));
  for (const auto& r : prepared.value("prepare", json::object()).value("removed_stale", json::array())) {
    obs_.Note("removed the earlier run's worktree " + r.value("path", "?") + " (--yes)");
  }
  wt_created_ = true;
  hunt_["worktrees"] = {{"baseline", base_.worktree.string()}, {"candidate", cand_.worktree.string()}};
  hunt_["commits"] = {{"baseline", out_.baseline_commit}, {"candidate", out_.candidate_commit}};
  obs_.Note("worktrees " + base_.worktree.string() + ", " + cand_.worktree.string());
  // A remote side runs in a worktree on its host, beside the user's tree there, holding
  // the same bytes as its local (analysis) worktree.
  for (Side* s : {&base_, &cand_}) {
    if (!s->remote()) continue;
    s->remote_worktree = s->source.top + "-hunt-" + s->name;
    PARITY_RETURN_IF_ERROR(CreateRemoteWorktree(*s->host, s->source, s->remote_worktree, s->worktree, o_.assume_yes, o_.cancel));
    s->remote_created = true;
    hunt_["remote_worktrees"][s->name] = {{"host", s->host->Describe()}, {"path", s->remote_worktree},
                                          {"commit", s->source.commit}};
    obs_.Note("remote worktree " + s->Where());
  }
  return Status::Ok();
}

Status Hunt::PrepareSide(Side& s) {
  const ComparerSide& cfg = *s.config;
  const fs::path code = s.remote() ? fs::path(cfg.code_path).lexically_normal()
                                   : fs::absolute(cfg.code_path).lexically_normal();
  const fs::path run_dir = s.run_dir();
  const std::string where = c_.name + "." + s.key + ".run_script";
  PARITY_ASSIGN_OR_RETURN(RunScript script, ParseRunScript(cfg.run_script, where));
  s.argv = MapArgvIntoWorktree(script.argv, code, run_dir);
  s.env = MapEnvIntoWorktree(script.env, code, run_dir);
  if (s.argv != script.argv || s.env != script.env) {
    obs_.Note(s.key + ".run_script: paths into " + code.string() + " now point into the worktree");
  }
  for (const auto& word : script.literal_values) {
    Warn(where + ": " + word + " is passed literally (parity runs no shell: nothing in it is expanded or unquoted)");
  }
  auto place = [&](const std::string& p) {
    fs::path mapped = MapIntoWorktree(p, code, run_dir);
    return mapped.is_relative() ? run_dir / mapped : mapped;
  };
  s.dump_dir = place(s.name == "baseline" ? c_.baseline_data_dir : c_.test_data_dir);
  if (s.remote()) {  // dumped on the host; msprobe_first_diff reads the copy fetched after the run
    s.remote_dump_dir = s.dump_dir.string();
    s.dump_dir = o_.report_dir / "hunt" / "remote" / s.name;
  }
  if (!cfg.log_path.empty()) s.log_path = place(cfg.log_path);
  if (!cfg.metrics_file.empty()) s.metrics_file = place(cfg.metrics_file);
  return Status::Ok();
}

Result<RunFiles> Hunt::RunSide(Side& s, const std::string& label, std::vector<std::string> argv, std::optional<int> steps) {
  const fs::path tb_dir = o_.report_dir / "tb" / (s.name + "_" + label);
  // A remote run writes its events on its host; the newest file is fetched into tb_dir.
  const std::string run_tb_dir = s.remote() ? s.remote_worktree + "/.parity_hunt/tb/" + s.name + "_" + label
                                            : tb_dir.string();
  if (tensorboard_) {
    for (auto& flag : TensorBoardFlags(run_tb_dir)) argv.push_back(flag);
  }
  json args = {{"action", "start"}, {"worktree", s.run_dir()}, {"side", s.name}, {"launcher", "argv"},
               {"argv", argv}, {"config", label}};
  if (s.remote()) args.update(RunTrainingRemoteArgs(*s.ssh));
  // The one place a side's variables reach its child (run_training's env, recorded in the
  // ledger); the user's policy on what may pass is applied by run_training.
  if (!s.env.empty()) args["env"] = s.env;
  if (s.config && s.config->executor != "default") args["executor"] = s.config->executor;
  if (steps) args["steps"] = *steps;
  // A file the run writes may carry a timestamp a tick older than this clock reads.
  const auto started = fs::file_time_type::clock::now() - std::chrono::seconds(1);
  double remote_started = 0;  // the same on the host's clock, which its file times follow
  if (s.remote()) {
    auto clock = RemoteClock(*s.host);
    if (!clock.ok()) return std::move(clock).take_status().Context(s.config ? SideWhere(c_, *s.config, s.key) : s.name);
    remote_started = *clock - 1;
  }
  obs_.Note(label + ": " + s.name + " run" + (steps ? ", " + std::to_string(*steps) + " step(s)" : ""));
  PARITY_ASSIGN_OR_RETURN(json run, Call("run_training", args));
  std::string log = run["job"].value("log_path", "");
  if (log.empty()) log = (o_.report_dir / run["job"].value("log", "")).string();
  obs_.Note(label + ": " + s.name + " " + run["job"].value("message", "ok"));
  if (label == kCase) PARITY_RETURN_IF_ERROR(s.remote() ? FetchDumps(s, remote_started) : CheckFreshDump(s, started));
  RunFiles files;
  files.log = log;
  if (tensorboard_) {
    if (s.remote()) {
      Status fetched = FetchEvents(s, run_tb_dir, remote_started, tb_dir);
      if (!fetched.ok()) return std::move(fetched).Context(SideWhere(c_, *s.config, s.key) + " " + label);
    }
    auto events = NewestEventFile(tb_dir);
    if (!events.ok()) {
      // The first run (the baseline's) already shows it: the test side does not run.
      return NoTensorBoardEvents(
          "the " + s.key + " run (" + label + ")", tb_dir, log,
          "Name what to compare instead: debug.log_keywords (the printed values of those keys; with tolerance 0 "
          "they may not decide, and the hunt then goes on to msprobe's dumps) or log_path in " + c_.name + " (the "
          "log the run_script writes), or make the trainer write TensorBoard (the tensorboard package in its "
          "interpreter)");
    }
    files.events = events->string();
  }
  if (s.metrics_file) {
    PARITY_ASSIGN_OR_RETURN(files.metrics_file,
                            TakeWritten(s, *s.metrics_file, "metrics_file",
                                        o_.report_dir / "hunt" / "metrics" / (s.name + "_" + label + ".jsonl"), started,
                                        remote_started));
  }
  if (s.log_path) {
    PARITY_ASSIGN_OR_RETURN(files.log, TakeWritten(s, *s.log_path, "log_path",
                                                   o_.report_dir / "hunt" / "logs" / (s.name + "_" + label + ".log"),
                                                   started, remote_started));
  }
  return files;
}

Result<std::string> Hunt::TakeWritten(Side& s, const fs::path& path, const std::string& key, const fs::path& copy,
                                      fs::file_time_type started, double remote_started) {
  const std::string where = c_.name + "." + s.key + "." + key;
  const std::string hint = key == "metrics_file"
                               ? "give the JSON-lines file (one object per step: step, loss, grad_norm) the trainer "
                                 "writes on every run, or leave metrics_file out; a file left by an earlier run is "
                                 "not used"
                               : "give the file (or folder) the run_script writes its training log to, or leave "
                                 "log_path out to compare the run's own output";
  std::error_code ec;
  fs::create_directories(copy.parent_path(), ec);
  if (s.remote()) {
    auto newest = NewestRemoteFile(*s.host, path.string(), remote_started, 1, "", o_.cancel);
    if (!newest.ok()) return std::move(newest).take_status().Context(where);
    if (!*newest) {
      return NotFound(where + ": the run wrote nothing at " + path.string() + " on " + s.host->Describe()).WithHint(hint);
    }
    run::TransferOptions t;
    t.cancel = o_.cancel;
    PARITY_RETURN_IF_ERROR(run::DownloadFile(*s.host, (*newest)->path, copy, t).status());
    return copy.string();
  }
  PARITY_ASSIGN_OR_RETURN(fs::path written, WrittenSince(path, started, where, hint));
  PARITY_RETURN_IF_ERROR(CopyFileUnder(written, o_.report_dir, copy.lexically_relative(o_.report_dir)));
  return copy.string();
}

Status Hunt::FetchDumps(Side& s, double since) {
  std::error_code ec;
  fs::remove_all(s.dump_dir, ec);
  auto fetched = FetchFreshDumps(*s.host, s.remote_dump_dir, since, s.dump_dir, o_.cancel);
  if (!fetched.ok()) {
    Status st = std::move(fetched).take_status();
    if (st.kind() != ErrorKind::kFailedPrecondition) {
      return std::move(st).Context(SideWhere(c_, *s.config, s.key) + ": fetching the msprobe dump");
    }
    const std::string key = s.name == "baseline" ? "baseline_data_dir" : "test_data_dir";
    return FailedPrecondition("the " + s.key + " run wrote no msprobe dump.json under " + s.remote_dump_dir + " on " +
                              s.host->Describe() + " (" + c_.name + ".msprobe." + key + ")")
        .WithHint("the run_script (or the training code) must enable msprobe's dump into that folder, e.g. the toy "
                  "trainer's --dump.dir; a dump left by an earlier run is not used");
  }
  hunt_["fetched"][s.name] = *fetched;
  obs_.Note("fetched " + std::to_string(fetched->size()) + " msprobe file(s) of the " + s.name + " run from " +
            s.host->Describe());
  return Status::Ok();
}

Status Hunt::FetchEvents(Side& s, const std::string& remote_dir, double since, const fs::path& tb_dir) {
  PARITY_ASSIGN_OR_RETURN(auto newest, NewestRemoteFile(*s.host, remote_dir, since, 3, "events.out.tfevents", o_.cancel));
  if (!newest) {
    return NotFound("the " + s.key + " run wrote no TensorBoard event file under " + remote_dir + " on " +
                    s.host->Describe())
        .WithHint("the launcher must honour --metrics.enable_tensorboard and --metrics.save_tb_folder");
  }
  const fs::path to = tb_dir / fs::path(newest->path).lexically_relative(remote_dir);
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  run::TransferOptions t;
  t.cancel = o_.cancel;
  return run::DownloadFile(*s.host, newest->path, to, t).status();
}

Status Hunt::CheckFreshDump(const Side& s, fs::file_time_type since) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(s.dump_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 3) it.disable_recursion_pending();  // step*/rank*/dump.json; not the tensor files
    if (it->path().filename() == "dump.json" && fs::last_write_time(it->path(), ec) >= since) return Status::Ok();
  }
  const std::string key = s.name == "baseline" ? "baseline_data_dir" : "test_data_dir";
  return FailedPrecondition("the " + s.key + " run wrote no msprobe dump.json under " + s.dump_dir.string() + " (" +
                            c_.name + ".msprobe." + key + ")")
      .WithHint("the run_script (or the training code) must enable msprobe's dump into that folder, e.g. the toy "
                "trainer's --dump.dir; a dump left by an earlier run is not used");
}

Result<fs::path> Hunt::WrittenSince(const fs::path& path, fs::file_time_type since, const std::string& where,
                                    const std::string& hint) {
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  auto consider = [&](const fs::path& p) {
    auto t = fs::last_write_time(p, ec);
    if (!ec && t >= since && (newest.empty() || t > newest_time)) newest = p, newest_time = t;
  };
  if (fs::is_directory(path, ec)) {
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) consider(it->path());
    }
  } else if (fs::is_regular_file(path, ec)) {
    consider(path);
  }
  if (newest.empty()) {
    return NotFound(where + ": the run wrote nothing at " + path.string()).WithHint(hint);
  }
  return newest;
}

Result<json> Hunt::CompareLogs(const std::string& baseline, const std::string& candidate, const std::string& label,
                               bool common_steps) {
  json args = {{"baseline", baseline}, {"candidate", candidate}, {"case", label}};
  if (c_.tolerance == 0) args["bitwise"] = true;
  else args["tolerance"] = {{"abs", c_.tolerance}};
  if (!c_.log_keywords.empty()) args["keywords"] = args["metrics"] = c_.log_keywords;
  if (common_steps) args["steps"] = "common";
  if (c_.trace_threshold > 0) args["probe_tolerance"] = {{"abs", c_.trace_threshold}};
  return Call("compare_logs", args);
}

}  // namespace parity::workflow::hunt_internal
