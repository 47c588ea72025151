#include "domain/workflow/hunt.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "domain/ledger/ledger.h"
#include "domain/workflow/hunt_remote.h"
#include "domain/workflow/hunt_repo.h"
#include "domain/workflow/hunt_script.h"
#include "domain/workflow/hunt_shadow.h"
#include "domain/workflow/tensorboard_run.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr size_t kSteps = 7;
constexpr const char* kCase = "hunt_logs";  // the case of the uninstrumented runs (logs, report.json)

struct RunFiles {
  std::string log;     // the run's output (probe lines), or the config's log_path
  std::string events;  // its TensorBoard event file (full-precision metrics), when asked for
  const std::string& metrics() const { return events.empty() ? log : events; }
};

struct Side {
  std::string name;  // baseline | candidate (parity's names; PrecisionComparer says "test")
  const ComparerSide* config = nullptr;
  std::string key;  // baseline | test (the config's key)
  fs::path worktree;  // local; a remote side's is its analysis copy (a shadow worktree)
  std::vector<std::string> argv;  // run_script, mapped into the folder it runs in
  fs::path dump_dir;  // what msprobe_first_diff reads (a remote side's: the fetched copy)
  std::optional<fs::path> log_path;  // the config's log_path, mapped; empty: run_training's log
  RunFiles run0;                    // the uninstrumented run's
  SideSource source;                // its repository and commit, on its host
  // A remote side (mode "remote"): the connection, and the worktree it runs in there.
  std::optional<run::SshTarget> ssh;
  std::unique_ptr<run::Host> host;
  std::string remote_worktree, remote_dump_dir;
  bool remote_created = false;
  std::vector<std::string> remote_probed;  // files uploaded with probes (RevertAll restores them)
  std::string helper;

  bool remote() const { return host != nullptr; }
  std::string run_dir() const { return remote() ? remote_worktree : worktree.string(); }
  std::string Where() const { return remote() ? remote_worktree + " on " + host->Describe() : worktree.string(); }
};

Result<json> ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path.string() + ": not valid JSON");
  return j;
}

Status WriteJson(const fs::path& path, const json& value) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << value.dump(2) << "\n";
    if (!out) return Unavailable("cannot write " + tmp.string());
  }
  fs::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  return Status::Ok();
}

std::string Rel(const fs::path& file, const fs::path& root) {
  return fs::path(file).lexically_normal().lexically_relative(root.lexically_normal()).generic_string();
}

bool IsTensorRecord(const json& probe) {
  const json& b = probe.value("baseline", json::object());
  return b.is_object() && b.value("type", "").find("Tensor") != std::string::npos;
}

class Hunt {
 public:
  Hunt(const ComparerConfig& c, const HuntOptions& o, StepRunner& r, PipelineObserver& obs)
      : c_(c), o_(o), run_(r), obs_(obs) {
    base_ = {"baseline", &c.baseline, "baseline"};
    cand_ = {"candidate", &c.test, "test"};
  }

  Result<HuntOutcome> Run() {
    Result<HuntOutcome> result = Body();
    // Probes never outlive the hunt, whatever happened (error, cancel, a refused step).
    Status reverted = RevertAll();
    if (!result.ok()) {
      Status s = std::move(result).take_status();
      if (!reverted.ok()) s.WithEvidence("revert", reverted.ToString());
      for (Side* side : {&base_, &cand_}) {
        if (!side->remote_created) continue;
        s.WithHint((s.hint().empty() ? "" : s.hint() + "; ") + "the remote worktree " + side->Where() + " is left "
                   "for inspection (remove it with `git -C " + side->source.top + " worktree remove --force " +
                   side->remote_worktree + "` there)");
      }
      if (!wt_created_) return s;
      return s.WithHint((s.hint().empty() ? "" : s.hint() + "; ") + "the worktrees " + base_.worktree.string() +
                        " and " + cand_.worktree.string() + " are left for inspection (remove them with parity call "
                        "audit_workspace '{\"action\":\"cleanup\",\"repo\":\"" + repo_.repo.string() + "\"}')");
    }
    if (!reverted.ok()) return reverted;
    return result;
  }

 private:
  Result<json> Call(const std::string& tool, json args) {
    if (o_.cancel.cancelled()) return Cancelled("parity hunt was cancelled before " + tool);
    args["report_dir"] = o_.report_dir.string();
    auto r = run_.Call(tool, args);
    if (!r.ok()) return std::move(r).take_status().Context(tool);
    return r;
  }

  Result<HuntOutcome> Body() {
    obs_.Step(1, kSteps, "configuration and repository");
    PARITY_RETURN_IF_ERROR(CheckConfig());
    PARITY_RETURN_IF_ERROR(ResolveSources());
    out_.baseline_commit = base_.source.commit;
    out_.candidate_commit = cand_.source.commit;
    obs_.Note("baseline " + base_.source.commit.substr(0, 12) + ", test " + cand_.source.commit.substr(0, 12) +
              (shadow_ ? " (shadow repository " + repo_.repo.string() + ")" : " in " + repo_.repo.string()));
    if (base_.source.commit == cand_.source.commit) {
      Warn("baseline and test are the same commit " + repo_.baseline_commit.substr(0, 12) +
           ": only the test tree's uncommitted files can differ");
    }

    obs_.Step(2, kSteps, "isolated worktrees (audit_workspace)");
    PARITY_RETURN_IF_ERROR(Worktrees());
    for (Side* s : {&base_, &cand_}) PARITY_RETURN_IF_ERROR(PrepareSide(*s));
    // Full precision where the trainer offers it: torchtitan prints too few digits to decide
    // bitwise equality. The config's own log_path or keywords mean its log is what counts.
    tensorboard_ = c_.log_keywords.empty() && !base_.log_path && !cand_.log_path &&
                   TakesTorchtitanFlags(base_.argv) && TakesTorchtitanFlags(cand_.argv);
    hunt_["metrics_from"] = tensorboard_ ? "tensorboard" : "log";
    if (tensorboard_) obs_.Note("loss and grad norm from TensorBoard events (full precision) under " +
                                (o_.report_dir / "tb").string());

    obs_.Step(3, kSteps, "baseline and test runs (run_training)");
    for (Side* s : {&base_, &cand_}) {
      auto flag = StepsFlagOf(*s);
      PARITY_ASSIGN_OR_RETURN(s->run0, RunSide(*s, kCase, s->argv, flag ? std::optional<int>(flag->value) : std::nullopt));
    }

    obs_.Step(4, kSteps, "loss and grad norm (compare_logs)");
    PARITY_ASSIGN_OR_RETURN(json compared, CompareLogs(base_.run0.metrics(), cand_.run0.metrics(), kCase, false));
    std::string log_verdict = compared.value("verdict", "INCONCLUSIVE");
    hunt_["compare"] = {{"case", kCase}, {"verdict", log_verdict}, {"reason", compared.value("verdict_reason", "")},
                        {"report", compared.value("report", "")}};
    obs_.Note("logs: " + log_verdict + " — " + compared.value("verdict_reason", ""));
    if (log_verdict == "PASS") {
      Conclude(kHuntNoDivergence, "loss and grad norm agree at every step (" + compared.value("verdict_reason", "") + ")");
      return Finish();
    }

    obs_.Step(5, kSteps, "first divergent operator (msprobe_first_diff)");
    PARITY_RETURN_IF_ERROR(FirstDiff(log_verdict));
    if (!out_.verdict.empty()) return Finish();

    obs_.Step(6, kSteps, "probes at the divergent line (inject_prints, reruns, compare_logs)");
    PARITY_RETURN_IF_ERROR(Iterate());
    return Finish();
  }

  Status CheckConfig() {
    if (c_.baseline_data_dir.empty() || c_.test_data_dir.empty()) {
      return InvalidArgument(c_.name + ".msprobe." + (c_.baseline_data_dir.empty() ? "baseline_data_dir" : "test_data_dir") +
                             ": required by parity hunt (where that side's run_script makes msprobe dump its data)")
          .WithHint("enable msprobe's dump in the training (PrecisionDebugger, or the toy trainer's --dump.dir) and "
                    "give the dump folders");
    }
    hunt_["config"] = Redacted(c_);
    hunt_["tolerance"] = c_.tolerance;
    hunt_["max_iterations"] = c_.max_iterations;
    return Status::Ok();
  }

  // Each side's repository and commit on its host. Both local in one repository: worktrees
  // of it directly. A remote side or two repositories: both trees in a local shadow
  // repository (hunt_shadow.h), whose worktrees are analysed (and run, for a local side).
  Status ResolveSources() {
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

  run::Host& HostOf(Side& s) { return s.remote() ? *s.host : *local_; }

  void Warn(const std::string& line) {
    obs_.Note("warning: " + line);
    out_.warnings.push_back(line);
  }

  // The worktrees, from the two commits; the test tree's uncommitted files by their class.
  Status Worktrees() {
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
    if (!unconfirmed.empty() && !o_.assume_yes) {
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
    PARITY_ASSIGN_OR_RETURN(json prepared, Call("audit_workspace", args));
    wt_created_ = true;
    hunt_["worktrees"] = {{"baseline", base_.worktree.string()}, {"candidate", cand_.worktree.string()}};
    hunt_["commits"] = {{"baseline", out_.baseline_commit}, {"candidate", out_.candidate_commit}};
    obs_.Note("worktrees " + base_.worktree.string() + ", " + cand_.worktree.string());
    // A remote side runs in a worktree on its host, beside the user's tree there, holding
    // the same bytes as its local (analysis) worktree.
    for (Side* s : {&base_, &cand_}) {
      if (!s->remote()) continue;
      s->remote_worktree = s->source.top + "-hunt-" + s->name;
      PARITY_RETURN_IF_ERROR(CreateRemoteWorktree(*s->host, s->source, s->remote_worktree, s->worktree, o_.cancel));
      s->remote_created = true;
      hunt_["remote_worktrees"][s->name] = {{"host", s->host->Describe()}, {"path", s->remote_worktree},
                                            {"commit", s->source.commit}};
      obs_.Note("remote worktree " + s->Where());
    }
    return Status::Ok();
  }

  // The side's command, dump folder and log in its worktree.
  Status PrepareSide(Side& s) {
    const ComparerSide& cfg = *s.config;
    const fs::path code = s.remote() ? fs::path(cfg.code_path).lexically_normal()
                                     : fs::absolute(cfg.code_path).lexically_normal();
    const fs::path run_dir = s.run_dir();
    PARITY_ASSIGN_OR_RETURN(auto words, SplitRunScript(cfg.run_script, c_.name + "." + s.key + ".run_script"));
    s.argv = MapArgvIntoWorktree(words, code, run_dir);
    if (s.argv != words) obs_.Note(s.key + ".run_script: paths into " + code.string() + " now point into the worktree");
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
    return Status::Ok();
  }

  static std::optional<StepsFlag> StepsFlagOf(const Side& s) { return FindStepsFlag(s.argv); }

  // One run of a side: its log (the config's log_path when it names one) and, for a
  // torchtitan-style command, its TensorBoard events in the report directory.
  Result<RunFiles> RunSide(Side& s, const std::string& label, std::vector<std::string> argv, std::optional<int> steps) {
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
    RunFiles files{log, ""};
    if (tensorboard_) {
      if (s.remote()) {
        Status fetched = FetchEvents(s, run_tb_dir, remote_started, tb_dir);
        if (!fetched.ok()) return std::move(fetched).Context(SideWhere(c_, *s.config, s.key) + " " + label);
      }
      PARITY_ASSIGN_OR_RETURN(fs::path events, NewestEventFile(tb_dir));
      files.events = events.string();
    }
    if (!s.log_path) return files;
    if (s.remote()) {
      auto log_copy = FetchLog(s, label, remote_started);
      if (!log_copy.ok()) return std::move(log_copy).take_status().Context(SideWhere(c_, *s.config, s.key) + " " + label);
      files.log = *log_copy;
      return files;
    }
    PARITY_ASSIGN_OR_RETURN(fs::path written, WrittenSince(*s.log_path, started, c_.name + "." + s.key + ".log_path"));
    fs::path copy = o_.report_dir / "hunt" / "logs" / (s.name + "_" + label + ".log");
    std::error_code ec;
    fs::create_directories(copy.parent_path(), ec);
    fs::copy_file(written, copy, fs::copy_options::overwrite_existing, ec);
    if (ec) return Unavailable("cannot copy " + written.string() + " to " + copy.string() + ": " + ec.message());
    files.log = copy.string();
    return files;
  }

  // A remote run's rank-0 msprobe files, fetched (streamed) into the report directory; only
  // what this run dumped (file times on the host's clock), as CheckFreshDump does locally.
  Status FetchDumps(Side& s, double since) {
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

  // The newest TensorBoard event file a remote run wrote, into the same place under tb_dir.
  Status FetchEvents(Side& s, const std::string& remote_dir, double since, const fs::path& tb_dir) {
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

  // The config's log_path on a remote side: the newest file written there since the run began.
  Result<std::string> FetchLog(Side& s, const std::string& label, double since) {
    const std::string where = c_.name + "." + s.key + ".log_path";
    PARITY_ASSIGN_OR_RETURN(auto newest, NewestRemoteFile(*s.host, s.log_path->string(), since, 1, "", o_.cancel));
    if (!newest) {
      return NotFound(where + ": the run wrote no log at " + s.log_path->string() + " on " + s.host->Describe())
          .WithHint("give the file (or folder) the run_script writes its training log to, or leave log_path out to "
                    "compare the run's own output");
    }
    fs::path copy = o_.report_dir / "hunt" / "logs" / (s.name + "_" + label + ".log");
    std::error_code ec;
    fs::create_directories(copy.parent_path(), ec);
    run::TransferOptions t;
    t.cancel = o_.cancel;
    PARITY_RETURN_IF_ERROR(run::DownloadFile(*s.host, newest->path, copy, t).status());
    return copy.string();
  }

  // msprobe_first_diff must read what this run dumped, not a dump left by an earlier one.
  Status CheckFreshDump(const Side& s, fs::file_time_type since) {
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

  // The log file (or the newest file of a log folder) the run just wrote.
  static Result<fs::path> WrittenSince(const fs::path& path, fs::file_time_type since, const std::string& where) {
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
      return NotFound(where + ": the run wrote no log at " + path.string())
          .WithHint("give the file (or folder) the run_script writes its training log to, or leave log_path out to "
                    "compare the run's own output");
    }
    return newest;
  }

  Result<json> CompareLogs(const std::string& baseline, const std::string& candidate, const std::string& label,
                           bool common_steps) {
    json args = {{"baseline", baseline}, {"candidate", candidate}, {"case", label}};
    if (c_.tolerance == 0) args["bitwise"] = true;
    else args["tolerance"] = {{"abs", c_.tolerance}};
    if (!c_.log_keywords.empty()) args["keywords"] = args["metrics"] = c_.log_keywords;
    if (common_steps) args["steps"] = "common";
    if (c_.trace_threshold > 0) args["probe_tolerance"] = {{"abs", c_.trace_threshold}};
    return Call("compare_logs", args);
  }

  Status FirstDiff(const std::string& log_verdict) {
    json args = {{"baseline_dump", base_.dump_dir.string()}, {"candidate_dump", cand_.dump_dir.string()},
                 {"criterion", c_.tolerance == 0 ? "bitwise" : "msprobe"}, {"worktree", cand_.worktree.string()},
                 {"repo", cand_.worktree.string()}, {"baseline_ref", repo_.baseline_commit},
                 {"candidate_ref", repo_.candidate_commit}};
    if (!c_.parse_code_dir.empty()) args["user_code"] = {c_.parse_code_dir};
    PARITY_ASSIGN_OR_RETURN(first_diff_, Call("msprobe_first_diff", args));
    const json& src = first_diff_["source"];
    dump_step_ = src.contains("candidate") ? src["candidate"].value("step", 0) : 0;
    dump_rank_ = src.contains("candidate") ? src["candidate"].value("rank", 0) : 0;
    PARITY_RETURN_IF_ERROR(CopyCompareTable());
    if (!first_diff_.value("found", false)) {
      std::string where = "the msprobe dumps (step " + std::to_string(dump_step_) + ", rank " + std::to_string(dump_rank_) + ")";
      if (log_verdict == "FAIL") {
        Conclude(kHuntInconclusive, "loss/grad norm differ, but " + where + " show no divergent API: dump the step "
                 "where the logs first differ (msprobe's step setting) and run the hunt again");
      } else {
        Conclude(kHuntNoDivergence, "the logs' printed digits cannot decide (" + log_verdict + "), and " + where +
                 " show no divergent API: " + first_diff_.value("explanation", ""));
      }
      return Status::Ok();
    }
    PARITY_RETURN_IF_ERROR(KeepDumps());
    const json& fd = first_diff_["first_divergence"];
    obs_.Note("first divergent API " + fd.value("api", "?") + " (" + fd.value("verdict", "?") + "): " +
              first_diff_.value("explanation", ""));
    const json& source = fd.value("source", json());
    if (!source.is_object() || !source["local_file"].is_string()) {
      located_ = {{"api", fd.value("api", "")}};
      Conclude(kHuntInconclusive, "msprobe names " + fd.value("api", "?") + " but no line of user code in the " +
               "worktree: " + fd.value("stack_note", json("the stack has no user frame")).dump());
      return Status::Ok();
    }
    std::string file = Rel(source["local_file"].get<std::string>(), cand_.worktree);
    int line = source.value("line", 0);
    located_ = {{"api", fd.value("api", "")}, {"file", file}, {"line", line}, {"function", source.value("function", "")},
                {"code", source.value("line_text", "")}, {"in_changed_hunk", source.value("in_changed_hunk", false)},
                {"hunk", source.value("hunk", json())}};
    obs_.Note("user frame " + file + ":" + std::to_string(line) + ": " + source.value("line_text", ""));
    return Status::Ok();
  }

  // msprobe.compare_output_dir: the table where PrecisionComparer's users look for it, under
  // msprobe's own name for a rank's result; never over an existing file.
  Status CopyCompareTable() {
    if (c_.compare_output_dir.empty() || !first_diff_.value("compare_table", json()).is_string()) return Status::Ok();
    const fs::path from = first_diff_["compare_table"].get<std::string>();
    const fs::path dir = c_.compare_output_dir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      return Unavailable(c_.name + ".msprobe.compare_output_dir: cannot create " + dir.string() + ": " + ec.message());
    }
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
    const fs::path to = dir / ("compare_result_rank" + std::to_string(dump_rank_) + "_" + stamp + ".csv");
    fs::copy_file(from, to, fs::copy_options::none, ec);
    if (ec) {
      return Unavailable(c_.name + ".msprobe.compare_output_dir: cannot copy " + from.string() + " to " + to.string() +
                         ": " + ec.message())
          .WithHint("an existing file is never overwritten; run again in a second, or choose another folder");
    }
    hunt_["compare_output"] = to.string();
    obs_.Note("compare table copied to " + to.string());
    return Status::Ok();
  }

  // The reruns dump again into the same folders (it is the same run_script), so the JSON
  // files msprobe_first_diff read are kept in the report directory as the evidence.
  Status KeepDumps() {
    for (const char* side : {"baseline", "candidate"}) {
      const json& src = first_diff_["source"].value(side, json::object());
      for (const char* key : {"dump_json", "stack_json", "construct_json"}) {
        if (!src.contains(key) || !src[key].is_string()) continue;
        fs::path from = src[key].get<std::string>();
        fs::path to = o_.report_dir / "hunt" / "dumps" / side / from.filename();
        std::error_code ec;
        fs::create_directories(to.parent_path(), ec);
        fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
        if (ec) return Unavailable("cannot keep " + from.string() + " as " + to.string() + ": " + ec.message());
        hunt_["dumps"][side][key] = Rel(to, o_.report_dir);
      }
    }
    return Status::Ok();
  }

  // Iteration 1: the statement; iteration 2: every user function on the stack.
  Status Iterate() {
    for (int it = 1; it <= std::min(c_.max_iterations, 2); ++it) {
      json targets_c = json::array(), targets_b = json::array(), notes = json::array();
      if (it == 1) {
        PARITY_RETURN_IF_ERROR(AddTarget(located_["file"], located_["line"], false, targets_b, targets_c, notes));
      } else {
        std::set<std::pair<std::string, int>> seen;  // a recursive stack names a frame twice
        for (const json& f : first_diff_["first_divergence"].value("stack", json::array())) {
          if (!f.value("user", false) || f.value("function", "") == "<module>") continue;
          if (!seen.insert({f.value("file", ""), f.value("line", 0)}).second) continue;
          fs::path local = LocalFrameFile(f["file"].get<std::string>());
          std::string rel = Rel(local, cand_.worktree);
          if (local.is_relative() || rel.rfind("..", 0) == 0 || !fs::exists(cand_.worktree / rel)) {
            notes.push_back("frame " + f["file"].get<std::string>() + " is not in the worktree: not instrumented");
            continue;
          }
          PARITY_RETURN_IF_ERROR(AddTarget(rel, f["line"], true, targets_b, targets_c, notes));
        }
      }
      if (!out_.verdict.empty()) return Status::Ok();  // AddTarget concluded
      if (targets_c.empty() || targets_b.empty()) {
        Conclude(kHuntInconclusive, "nothing left to instrument in iteration " + std::to_string(it));
        return Status::Ok();
      }
      PARITY_ASSIGN_OR_RETURN(bool done, Instrumented(it, targets_b, targets_c, notes));
      if (done) return Status::Ok();
    }
    Conclude(kHuntInconclusive, "max_iterations (" + std::to_string(c_.max_iterations) + ") reached: the inputs of " +
             located_.value("file", "") + ":" + std::to_string(located_.value("line", 0)) + " already differ");
    return Status::Ok();
  }

  // A stack frame's file as recorded where the candidate ran, in its local worktree.
  fs::path LocalFrameFile(const std::string& recorded) const {
    if (!cand_.remote()) return recorded;
    return MapIntoWorktree(recorded, cand_.remote_worktree, cand_.worktree);
  }

  // Adds a candidate target and its baseline counterpart (the same line before the change).
  Status AddTarget(const std::string& file, int line, bool enclosing, json& targets_b, json& targets_c, json& notes) {
    json t = {{"file", file}, {"line", line}};
    if (enclosing) t["enclosing_function"] = true;
    if (!fs::exists(base_.worktree / file)) {
      notes.push_back(file + " does not exist in the baseline: probed on the test side only");
      targets_c.push_back(t);
      return Status::Ok();
    }
    auto hunks = msprobe::DiffHunks(cand_.worktree, repo_.baseline_commit, repo_.candidate_commit, file);
    if (!hunks.ok()) return std::move(hunks).take_status().Context("mapping " + file + " to the baseline");
    std::optional<int> base_line = BaselineLineOf(*hunks, line);
    if (!base_line) {
      if (!enclosing) {
        Conclude(kHuntInconclusive, file + ":" + std::to_string(line) + " was added by the change, so the baseline "
                 "has no statement to compare it with; msprobe names " + located_.value("api", "?") + " there");
        return Status::Ok();
      }
      notes.push_back(file + ":" + std::to_string(line) + " was added by the change; the baseline's enclosing "
                      "function is looked up from the nearest line above");
      base_line = std::max(1, line - 1);
      for (int l = line - 1; l >= 1 && !(base_line = BaselineLineOf(*hunks, l)); --l) {}
      if (!base_line) base_line = 1;
    }
    json tb = t;
    tb["line"] = *base_line;
    targets_b.push_back(tb);
    targets_c.push_back(t);
    return Status::Ok();
  }

  // Injects, reruns both sides, reverts, checks the runs against the uninstrumented ones
  // and reads the first divergent probe. Returns true when the hunt has its answer.
  Result<bool> Instrumented(int it, const json& targets_b, const json& targets_c, json notes) {
    const std::string label = "hunt_probe" + std::to_string(it);
    json record = {{"iteration", it}, {"phase", it == 1 ? "statement" : "stack functions"},
                   {"targets", {{"baseline", targets_b}, {"candidate", targets_c}}}};
    // The probes print on the dumped rank, for the first call when the dump is of step 0.
    json calls = dump_step_ == 0 ? json::array({1}) : json::array();
    for (Side* s : {&base_, &cand_}) {
      json args = {{"action", "inject"}, {"worktree", s->worktree.string()},
                   {"targets", s == &base_ ? targets_b : targets_c}, {"rank", dump_rank_}, {"calls", calls}};
      injected_.push_back(s);
      PARITY_ASSIGN_OR_RETURN(json inj, Call("inject_prints", args));
      record["injected"][s->name] = {{"files", inj.value("files", json::array())},
                                     {"probes", inj.value("probes", json::array()).size()},
                                     {"analyser", inj.value("analyser", json())}};
      if (s->remote()) {  // injected (and analysed) locally; the same bytes go where it runs
        s->helper = inj.value("helper", "_parity_probe.py");
        for (const json& f : inj.value("files", json::array())) s->remote_probed.push_back(f.value("path", ""));
        Status up = UploadInjected(*s->host, s->worktree, s->remote_worktree, s->remote_probed, s->helper, o_.cancel);
        if (!up.ok()) return std::move(up).Context(SideWhere(c_, *s->config, s->key));
        record["injected"][s->name]["uploaded_to"] = s->Where();
      }
      obs_.Note(label + ": " + std::to_string(inj.value("probes", json::array()).size()) + " probe(s) in " + s->name);
    }
    std::map<std::string, RunFiles> runs;
    for (Side* s : {&base_, &cand_}) {
      std::vector<std::string> argv = s->argv;
      std::optional<int> steps;
      if (auto flag = StepsFlagOf(*s)) {
        steps = std::min(flag->value, dump_step_ + 1);
        argv = WithSteps(argv, *flag, *steps);
      } else if (it == 1 && s == &base_) {
        Warn("the run_script has no step flag parity knows (--training.steps, --train-iters): reruns take as long "
             "as the first runs");
      }
      PARITY_ASSIGN_OR_RETURN(runs[s->name], RunSide(*s, label, argv, steps));
    }
    record["steps"] = dump_step_ + 1;
    const size_t reverted_before = reverted_.size();
    PARITY_RETURN_IF_ERROR(RevertAll());
    record["reverted"] = json::array();
    for (size_t i = reverted_before; i < reverted_.size(); ++i) record["reverted"].push_back(reverted_[i]);

    // Trust the instrumented runs only if they reproduce the uninstrumented ones.
    for (Side* s : {&base_, &cand_}) {
      PARITY_ASSIGN_OR_RETURN(json check, CompareLogs(s->run0.metrics(), runs[s->name].metrics(),
                                                      label + "_" + s->name + "_check", true));
      std::string v = check.value("verdict", "INCONCLUSIVE");
      record["perturbation"][s->name] = {{"verdict", v}, {"reason", check.value("verdict_reason", "")}};
      if (v == "FAIL") {
        iterations_.push_back(record);
        Conclude(kHuntInconclusive, "the probes perturbed the numerics: the instrumented " + s->name + " run's loss/grad "
                 "norm differ from its uninstrumented run (" + check.value("verdict_reason", "") + "), so its probes "
                 "cannot be trusted");
        return true;
      }
      if (v != "PASS") {
        Warn(label + ": the instrumented " + s->name + " run's loss/grad norm equal the uninstrumented run's as printed, "
             "but the printed digits cannot prove bitwise equality (" + check.value("verdict_reason", "") + ")");
      }
    }
    PARITY_ASSIGN_OR_RETURN(json compared, CompareLogs(runs["baseline"].log, runs["candidate"].log, label, false));
    const json& probes = compared.value("probes", json());
    if (!probes.is_object()) {
      return Internal("compare_logs returned no probe comparison for " + label)
          .WithEvidence("logs", runs["baseline"].log + "\n" + runs["candidate"].log);
    }
    record["probes"] = {{"baseline_count", probes.value("baseline_count", json())},
                        {"candidate_count", probes.value("candidate_count", json())},
                        {"matched", probes.value("matched", json())},
                        {"divergent_count", probes.value("divergent_count", json())},
                        {"first_divergent", probes.value("first_divergent", json())},
                        {"trace_threshold", c_.trace_threshold},
                        {"beyond_threshold_count", probes.value("beyond_tolerance_count", json())},
                        {"first_beyond_threshold", probes.value("first_beyond_tolerance", json())},
                        {"unmatched_baseline", probes.value("unmatched_baseline", json::array())},
                        {"unmatched_candidate", probes.value("unmatched_candidate", json::array())},
                        {"report", compared.value("report", "")}};
    if (!notes.empty()) record["notes"] = notes;
    // Across the stack's functions, the first divergent tensor: an outer function's differing
    // non-tensor argument (main's argv, which names each side's own dump folder) says
    // little. At the statement every input counts.
    json first = CountedDivergence(probes, label);
    if (it > 1 && first.is_object() && !IsTensorRecord(first)) {
      for (const json& p : probes.value("next_divergent", json::array())) {
        if (IsTensorRecord(p) && !p.value("within_tolerance", false)) {
          record["non_tensor_divergence_skipped"] = first;
          Warn(label + ": a non-tensor probe differs first (" + first.value("site", "?") + " " + first.value("when", "") +
               " " + first.value("name", "?") + "); the first differing tensor is reported");
          first = p;
          break;
        }
      }
    }
    iterations_.push_back(record);
    if (!first.is_object()) {
      Conclude(kHuntInconclusive, "the probes of iteration " + std::to_string(it) + " are equal on both sides (" +
               probes.value("matched", json(0)).dump() + " matched): the difference is not visible at the instrumented "
               "call; dump another step or rank");
      return true;
    }
    std::string when = first.value("when", "");
    // Sites are the test side's lines (the user's change); the pairing key holds no line.
    const json& cand_record = first.value("candidate", json::object());
    std::string site = cand_record.is_object() ? cand_record.value("site", first.value("site", "")) : first.value("site", "");
    std::string where = site + " " + when + " " + first.value("name", "?");
    obs_.Note(label + ": first divergent probe " + where);
    if (!IsTensorRecord(first)) {
      Warn(label + ": the first divergent probe is not a tensor (" + where + "), and no tensor is among the " +
           std::to_string(1 + probes.value("next_divergent", json::array()).size()) + " divergent probes compare_logs "
           "lists (of " + probes.value("divergent_count", json(0)).dump() + ")");
    }
    json probe = {{"site", site}, {"baseline_site", first.value("site", "")}, {"when", when}, {"name", first.value("name", "")},
                  {"call", first.value("call", json())}, {"rank", first.value("rank", json())},
                  {"baseline", first.value("baseline", json())}, {"candidate", first.value("candidate", json())}};
    if (it == 1 && (when == "after" || when == "return")) {
      located_["probe"] = probe;
      const bool within_before = first.value("key", "") != probes.value("first_divergent", json::object()).value("key", "");
      Conclude(kHuntOperator, located_.value("file", "") + ":" + std::to_string(located_.value("line", 0)) + " (" +
               located_.value("api", "") + "): every input probed before the statement is equal on both sides" +
               (within_before ? " within debug.trace_threshold (" + json(c_.trace_threshold).dump() + ")" : "") +
               ", its output " + first.value("name", "") + " differs");
      return true;
    }
    if (it == 1) {
      obs_.Note(label + ": the inputs already differ (" + first.value("name", "") + "): instrumenting every function on "
                "the stack");
      return false;
    }
    located_["probe"] = probe;
    located_["site"] = site;
    located_["when"] = when;
    Conclude(kHuntProbe, when == "entry"
                             ? "the first divergent probe is argument " + first.value("name", "") + " at the entry of "
                               "the function at " + site + ": it already differs when that function "
                               "is called; the difference arises before, in its caller"
                             : "the first divergent probe is " + where + ": the function's arguments are equal, its "
                               "result differs, so the divergence arises inside it");
    return true;
  }

  // The probe that decides: the first beyond debug.trace_threshold (bitwise differences
  // within it are reported, not followed); when every difference is within, the first
  // bitwise one, with a warning.
  json CountedDivergence(const json& probes, const std::string& label) {
    json first = probes.value("first_divergent", json());
    if (c_.trace_threshold <= 0 || !first.is_object() || !probes.contains("first_beyond_tolerance")) return first;
    const json& beyond = probes["first_beyond_tolerance"];
    const std::string threshold = json(c_.trace_threshold).dump();
    if (!beyond.is_object()) {
      Warn(label + ": every probe difference is within debug.trace_threshold (" + threshold + "); the first bitwise "
           "difference is followed: " + first.value("key", "?"));
      return first;
    }
    if (beyond.value("key", "") != first.value("key", "")) {
      const int64_t within = probes.value("divergent_count", int64_t{0}) - probes.value("beyond_tolerance_count", int64_t{0});
      obs_.Note(label + ": " + std::to_string(within) + " probe(s) differ only within debug.trace_threshold (" +
                threshold + "), first " + first.value("key", "?") + "; followed: " + beyond.value("key", "?"));
    }
    return beyond;
  }

  Status RevertAll() {
    Status first_error = Status::Ok();
    while (!injected_.empty()) {
      Side* s = injected_.back();
      injected_.pop_back();
      json args = {{"action", "revert"}, {"worktree", s->worktree.string()}, {"report_dir", o_.report_dir.string()}};
      auto r = run_.Call("inject_prints", args);  // also after a cancel: the probes must go
      auto st = r.ok() ? run_.Call("inject_prints", {{"action", "status"}, {"worktree", s->worktree.string()},
                                                     {"report_dir", o_.report_dir.string()}})
                       : Result<json>(std::move(r).take_status());
      if (!st.ok() || st->value("injected", true)) {
        Status e = st.ok() ? Internal("probes are still injected in " + s->worktree.string() + " after revert")
                           : std::move(st).take_status().Context("reverting the probes in " + s->worktree.string());
        if (!s->remote_probed.empty()) e.WithEvidence("remote files that may still hold probes", RemoteProbedList(*s));
        if (first_error.ok()) first_error = e;
        continue;
      }
      json entry = {{"worktree", s->worktree.string()}, {"files", r->value("files", json::array())},
                    {"verified", r->value("verified", "")}};
      if (s->remote() && !s->remote_probed.empty()) {
        auto restored = RestoreRemoteSide(*s);
        if (!restored.ok()) {
          if (first_error.ok()) first_error = std::move(restored).take_status();
          continue;
        }
        entry["remote"] = *restored;
        s->remote_probed.clear();
      }
      reverted_.push_back(entry);
    }
    return first_error;
  }

  // The local worktree's restored bytes uploaded and checked on the host; after a failure
  // (a lost connection, most likely), once more on a new connection.
  Result<json> RestoreRemoteSide(Side& s) {
    const CancellationToken never;  // also after a cancel: the probes must go
    auto restored = RestoreRemote(*s.host, s.worktree, s.remote_worktree, s.remote_probed, s.helper, never);
    if (!restored.ok() && s.host->Reconnect().ok()) {
      restored = RestoreRemote(*s.host, s.worktree, s.remote_worktree, s.remote_probed, s.helper, never);
    }
    if (restored.ok()) return restored;
    return std::move(restored).take_status().Context(SideWhere(c_, *s.config, s.key) + ": restoring the probed files")
        .WithEvidence("remote files that may still hold probes", RemoteProbedList(s));
  }

  static std::string RemoteProbedList(const Side& s) {
    std::string list;
    for (const auto& f : s.remote_probed) list += (list.empty() ? "" : ", ") + s.remote_worktree + "/" + f;
    return list + (list.empty() ? "" : ", ") + s.remote_worktree + "/" + s.helper + " (" + s.host->Describe() + ")";
  }

  void Conclude(const std::string& verdict, const std::string& explanation) {
    out_.verdict = verdict;
    out_.explanation = explanation;
  }

  Result<HuntOutcome> Finish() {
    obs_.Step(7, kSteps, "report (hunt/hunt.json, render_report)");
    obs_.Note("verdict: " + out_.verdict + " — " + out_.explanation);
    out_.located = located_.empty() ? json() : located_;
    hunt_["verdict"] = out_.verdict;
    hunt_["explanation"] = out_.explanation;
    hunt_["located"] = out_.located;
    hunt_["iterations"] = iterations_;
    hunt_["restored"] = reverted_;
    hunt_["warnings"] = out_.warnings;
    fs::path path = o_.report_dir / "hunt" / "hunt.json";
    json doc;
    if (first_diff_.is_object()) {
      auto written = ReadJson(path);  // msprobe_first_diff's, extended below
      if (!written.ok()) return std::move(written).take_status().Context("reading msprobe_first_diff's hunt.json");
      doc = *written;
    }
    if (!doc.is_object()) {
      doc = {{"schema", "parity.hunt/1"}, {"found", false}, {"first_divergence", nullptr},
             {"explanation", out_.explanation}};
    }
    doc["hunt"] = hunt_;
    PARITY_RETURN_IF_ERROR(WriteJson(path, doc));
    out_.hunt = hunt_;

    json args = {{"cases", {kCase}}, {"language", o_.language}};
    PARITY_ASSIGN_OR_RETURN(out_.report, Call("render_report", args));
    const json& outputs = out_.report.value("outputs", json::object());
    for (const char* key : {"html", "pdf"}) {
      if (outputs.contains(key) && outputs[key].is_string()) obs_.Note(std::string(key) + ": " + outputs[key].get<std::string>());
    }
    RecordInLedger(path);
    if (!o_.keep_worktrees) Cleanup();
    return out_;
  }

  void RecordInLedger(const fs::path& hunt_path) {
    ledger::Entry e;
    e.tool = "parity hunt";
    e.action = "hunt";
    e.side = "both";
    e.git = {{"repo", repo_.repo.string()}, {"commit", out_.candidate_commit}, {"baseline_commit", out_.baseline_commit}};
    if (shadow_) e.git["shadow"] = hunt_["shadow"];
    if (hunt_.contains("remote_worktrees")) e.git["remote_worktrees"] = hunt_["remote_worktrees"];
    e.inputs = {{"config", Redacted(c_)}};
    e.outputs = {{"hunt", Rel(hunt_path, o_.report_dir)}};
    e.outcome = {{"status", "ok"}, {"verdict", out_.verdict}, {"message", out_.explanation}};
    auto id = ledger::Append(o_.report_dir, e);
    if (!id.ok()) Warn("the hunt's ledger entry could not be written: " + id.status().ToString());
  }

  void Cleanup() {
    json args = {{"action", "cleanup"}, {"repo", repo_.repo.string()},
                 {"paths", {base_.worktree.string(), cand_.worktree.string()}}};
    auto done = Call("audit_workspace", args);
    if (!done.ok()) {
      Warn("the worktrees were not removed: " + done.status().ToString());
    } else {
      obs_.Note("removed the worktrees");
    }
    for (Side* s : {&base_, &cand_}) {
      if (!s->remote_created) continue;
      Status removed = RemoveRemoteWorktree(*s->host, s->source.top, s->remote_worktree, o_.cancel);
      if (!removed.ok()) {
        Warn("the remote worktree " + s->Where() + " was not removed: " + removed.ToString());
      } else {
        s->remote_created = false;
        obs_.Note("removed the remote worktree " + s->Where());
      }
    }
  }

  ComparerConfig c_;
  const HuntOptions& o_;
  StepRunner& run_;
  PipelineObserver& obs_;
  HuntOutcome out_;
  HuntRepo repo_;
  Side base_, cand_;
  bool wt_created_ = false;
  bool shadow_ = false;  // the trees come from the shadow repository (a remote side, or two repositories)
  std::unique_ptr<run::Host> local_ = run::MakeLocalHost();
  bool tensorboard_ = false;  // both sides' metrics from TensorBoard events (full precision)
  std::vector<Side*> injected_;
  json hunt_ = json::object(), located_ = json::object(), iterations_ = json::array(), reverted_ = json::array();
  json first_diff_;
  int dump_step_ = 0, dump_rank_ = 0;
};

}  // namespace

Result<HuntOutcome> RunHunt(const ComparerConfig& config, const HuntOptions& options, StepRunner& runner,
                            PipelineObserver& observer) {
  return Hunt(config, options, runner, observer).Run();
}

int HuntExitCode(const Result<HuntOutcome>& outcome) {
  if (!outcome.ok()) return 2;
  if (outcome->verdict == kHuntNoDivergence) return 0;
  if (outcome->verdict == kHuntOperator || outcome->verdict == kHuntProbe) return 1;
  return 2;
}

}  // namespace parity::workflow
