#include "domain/run/jobs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "domain/ledger/ledger.h"
#include "domain/run/executor.h"
#include "domain/run/job_host.h"
#include "domain/run/job_record.h"
#include "domain/run/job_scripts.h"
#include "domain/run/log_scan.h"
#include "support/safe_file.h"
#include "support/utf8.h"

namespace parity::run {

namespace fs = std::filesystem;

namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.empty() ? "run" : out;
}

// 128 random bits, hex: the mark a job's processes carry in their environment.
std::string NewNonce() {
  std::random_device rd;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

std::string NewJobId(const JobSpec& spec) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
  std::random_device rd;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(rd() & 0xffff));
  std::string who = spec.phase == "gen_ckpt" ? "gen_ckpt" : Sanitize(spec.side.empty() ? "run" : spec.side);
  return who + "-" + Sanitize(spec.config) + "-" + stamp + "-" + suffix;
}

std::string LogName(const JobSpec& spec) {
  if (spec.phase == "gen_ckpt") return "gen_ckpt_" + Sanitize(spec.config) + "_train.log";
  return Sanitize(spec.side.empty() ? "run" : spec.side) + "_" + Sanitize(spec.config) + "_train.log";
}

Result<bool> PathExists(Host& host, const std::string& path, bool directory) {
  ExecOptions o;
  o.timeout = std::chrono::seconds(30);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, host.Exec({"test", directory ? "-d" : "-e", path}, o));
  if (r.exit_code != 0 && r.exit_code != 1) {
    return Unavailable("cannot check " + path + " on " + host.Describe() + ": " + r.Describe());
  }
  return r.exit_code == 0;
}

int64_t FileSize(const fs::path& p) {
  std::error_code ec;
  auto n = fs::file_size(p, ec);
  return ec ? 0 : static_cast<int64_t>(n);
}

// Polls; for a remote job, copies the new log bytes into the local log until caught up.
Result<JobPoll> Sync(Executor& ex, const fs::path& report_dir, const json& job) {
  fs::path local_log = report_dir / job["log"].get<std::string>();
  if (!IsRemoteJob(job)) return ex.Poll(report_dir, job, -1);
  while (true) {
    PARITY_ASSIGN_OR_RETURN(JobPoll p, ex.Poll(report_dir, job, FileSize(local_log)));
    PARITY_RETURN_IF_ERROR(AppendFileUnder(report_dir, job["log"].get<std::string>(), p.log_bytes));
    if (p.log_bytes.size() < kRemoteLogChunk) return p;
  }
}

// The job's log is read as the record names it, a file name in the report directory, and
// never through a symlink (a planted link would put another file's lines in the result).
LogScanner ScanLog(const fs::path& report_dir, const json& job) {
  LogScanner scanner;
  auto fd = OpenUnder(report_dir, job["log"].get<std::string>(), O_RDONLY | O_NONBLOCK);
  struct stat st;
  if (!fd.ok() || ::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) return scanner;
  std::string buf(1u << 20, '\0');
  while (true) {
    ssize_t n = ::read(fd->get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    scanner.Feed(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  return scanner;
}

std::string LogTail(const fs::path& report_dir, const json& job) {
  auto data = ReadFileTailUnder(report_dir, job["log"].get<std::string>(), 16384);
  return data.ok() ? ToValidUtf8(LastLines(*data, 30, 4096)) : "(log not readable: " + data.status().message() + ")";
}

// The view every call returns; `scanner` describes the log as read so far.
// `live`: the executor's description of a running job (Executor::Describe).
json View(const fs::path& report_dir, const json& job, const LogScanner& scanner, const std::string& status,
          const json& live = nullptr) {
  json scan = scanner.ToJson();
  json v = {{"id", job["id"]},
            {"status", status},
            {"phase", job["phase"]},
            {"side", job["side"]},
            {"config", job["config"]},
            {"launcher", job["launcher"]},
            {"host", job["host"]},
            {"command", job["command"]},
            {"log", job["log"]},
            {"log_path", (report_dir / job["log"].get<std::string>()).string()},
            {"started", job["started"]},
            {"steps", {{"expected", job["expected_steps"]}, {"last", scan["last_step"]}, {"lines", scan["step_lines"]}}},
            {"latest_loss", scan["latest_loss"]},
            {"latest_grad_norm", scan["latest_grad_norm"]},
            {"nan_inf", scan["nan_inf"]},
            {"findings", scan["findings"]},
            {"ledger_entry", job.value("ledger_entry", json(nullptr))},
            {"notes", job.value("notes", json::array())}};
  if (job.contains("checkpoint_dir") && !job["checkpoint_dir"].get<std::string>().empty()) {
    v["checkpoint"] = job["checkpoint_dir"];
  }
  if (job.contains("final")) {
    for (auto it = job["final"].begin(); it != job["final"].end(); ++it) v[it.key()] = it.value();
  } else {
    v["message"] = scan["last_step"].is_null() ? "running, no step line yet"
                                                : "running: step " + scan["last_step"].dump() +
                                                      (job["expected_steps"].is_null() ? "" : " of " + job["expected_steps"].dump());
  }
  if (live.is_object()) {
    for (auto it = live.begin(); it != live.end(); ++it) {
      if (it.key() != "message_prefix") v[it.key()] = it.value();
    }
    if (live.contains("message_prefix")) v["message"] = live["message_prefix"].get<std::string>() + ": " + v["message"].get<std::string>();
  }
  return v;
}

// Decides how a finished job went, moves the initial checkpoint, records the outcome.
Result<json> Finalize(Executor& ex, const fs::path& report_dir, json job, const JobPoll& poll) {
  Host& host = ex.host();
  LogScanner scanner = ScanLog(report_dir, job);
  scanner.Flush();
  std::string status = "ok";
  std::vector<std::string> reasons;
  json exit_code = poll.exit_code ? json(*poll.exit_code) : json(nullptr);
  json signal = nullptr;
  if (poll.exit_code && *poll.exit_code > 128 && *poll.exit_code <= 128 + 64) signal = *poll.exit_code - 128;
  if (!poll.exit_code) {
    status = "lost";
    reasons.push_back(!poll.scheduler_reason.empty() ? poll.scheduler_reason
                      : poll.exists ? "the supervisor ended without recording an exit status (killed, or the host rebooted)"
                                    : "the job directory is gone from the host");
  } else if (poll.cancel_requested) {
    status = "cancelled";
    reasons.push_back(poll.scheduler_reason.empty() ? "cancelled on request" : poll.scheduler_reason);
  } else if (poll.timed_out) {
    status = "timeout";
    reasons.push_back(poll.scheduler_reason.empty()
                          ? "ran past its timeout of " + std::to_string(job.value("timeout_s", 0)) + " s and was killed"
                          : poll.scheduler_reason);
  } else if (poll.scheduler_failure) {
    status = "failed";
    reasons.push_back(poll.scheduler_reason);
  } else if (*poll.exit_code != 0) {
    status = "failed";
    reasons.push_back(signal.is_null() ? "exit code " + std::to_string(*poll.exit_code)
                                       : "killed by signal " + signal.dump() + " (exit status " +
                                             std::to_string(*poll.exit_code) + ")");
  }
  if (!scanner.findings().empty()) {
    if (status == "ok") status = "failed";
    std::string kinds;
    for (const auto& f : scanner.findings()) {
      if (kinds.find(f.kind) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + f.kind;
    }
    reasons.push_back(std::to_string(scanner.findings().size()) + " error line(s) in the log (" + kinds + ")");
  }
  if (!scanner.nan_inf().empty()) {
    if (status == "ok") status = "failed";
    reasons.push_back("NaN/Inf at step " + scanner.nan_inf()[0]["step"].dump());
  }
  if (!job["expected_steps"].is_null()) {
    int64_t expected = job["expected_steps"].get<int64_t>();
    int64_t last = scanner.last_step().value_or(0);
    if (last < expected) {
      if (status == "ok") status = "failed";
      reasons.push_back("ran " + std::to_string(last) + " of " + std::to_string(expected) + " steps");
    }
  }
  json checkpoint = nullptr;
  if (status == "ok" && job.contains("checkpoint_to_move") && !job["checkpoint_to_move"].is_null()) {
    std::string from = job["command"]["cwd"].get<std::string>() + "/" + job["checkpoint_to_move"].get<std::string>();
    std::string to = job["checkpoint_dir"].get<std::string>();
    auto moved = RunChecked(host, "moving the initial checkpoint", {"bash", "-c", kMoveDir, "parity-move", from, to});
    if (!moved.ok()) {
      status = "failed";
      reasons.push_back("the checkpoint " + from + " could not be moved to " + to + ": " +
                        LastLines(moved.status().message() + " " +
                                  (moved.status().evidence().empty() ? "" : moved.status().evidence().back().value), 5));
    } else {
      checkpoint = to;
    }
  }
  int64_t finished = poll.finished_unix.value_or(UnixNow());
  std::string message;
  if (status == "ok") {
    message = (scanner.last_step() ? std::to_string(*scanner.last_step()) + " steps" : std::string("finished")) +
              ", exit code 0, no error in the log";
  } else {
    for (const auto& r : reasons) message += (message.empty() ? "" : "; ") + r;
  }
  json final = {{"status", status},
                {"exit_code", exit_code},
                {"signal", signal},
                {"timed_out", poll.timed_out},
                {"finished", finished},
                {"duration_s", finished - job.value("started_unix", finished)},
                {"message", message}};
  if (!checkpoint.is_null()) final["checkpoint"] = checkpoint;
  if (status != "ok") final["log_tail"] = LogTail(report_dir, job);
  json described = ex.Describe(job, &poll);
  if (described.is_object()) {
    for (auto it = described.begin(); it != described.end(); ++it) {
      if (it.key() != "message_prefix" && it.key() != "message" && it.key() != "poll_after_s") final[it.key()] = it.value();
    }
  }
  job["final"] = final;
  PARITY_RETURN_IF_ERROR(SaveJob(report_dir, job));

  if (!job.value("ledger_entry", "").empty()) {
    json outcome = {{"status", status == "lost" ? "failed" : status},
                    {"exit_code", exit_code},
                    {"signal", signal},
                    {"duration_s", final["duration_s"]},
                    {"message", message},
                    {"steps", scanner.last_step() ? json(*scanner.last_step()) : json(nullptr)},
                    {"findings", scanner.ToJson()["findings"]},
                    {"nan_inf", scanner.nan_inf()}};
    if (final.contains("slurm")) outcome["slurm"] = final["slurm"];
    json outputs = {{"log", job["log"]}};
    if (!checkpoint.is_null()) {
      fs::path c(checkpoint.get<std::string>());
      auto rel = c.lexically_relative(report_dir);
      outputs["checkpoint"] = (!IsRemoteJob(job) && !rel.empty() && rel.native().rfind("..", 0) != 0) ? rel.string()
                                                                                                   : c.string();
    }
    PARITY_RETURN_IF_ERROR(ledger::Update(report_dir, job["ledger_entry"], {{"outcome", outcome}, {"outputs", outputs}}));
  }
  return View(report_dir, job, scanner, status);
}

// One poll under the job lock, judging the job when it has ended.
Result<json> Refresh(Executor& ex, const fs::path& report_dir, const std::string& id) {
  PARITY_ASSIGN_OR_RETURN(JobLock lock, JobLock::Acquire(report_dir, id));
  PARITY_ASSIGN_OR_RETURN(json job, LoadJob(report_dir, id));
  if (job.contains("final")) return View(report_dir, job, ScanLog(report_dir, job), job["final"]["status"]);
  PARITY_ASSIGN_OR_RETURN(JobPoll p, Sync(ex, report_dir, job));
  if (p.ended) return Finalize(ex, report_dir, job, p);
  return View(report_dir, job, ScanLog(report_dir, job), "running", ex.Describe(job, &p));
}

// The command as the job record keeps it: the ledger's form (environment values by name
// only unless recordable, support/redact.h) without the host, which the record has apart.
json RecordedCommand(const ledger::Command& command) {
  json c = ledger::ToJson(command);
  c.erase("host");
  return c;
}

}  // namespace

Result<json> StartJob(Host& host, const fs::path& report_dir, const JobSpec& spec) {
  return StartJob(*SupervisorExecutor(host), report_dir, spec);
}

Result<json> StartJob(Executor& ex, const fs::path& report_dir_in, const JobSpec& spec) {
  Host& host = ex.host();
  fs::path report_dir = fs::absolute(report_dir_in).lexically_normal();
  if (spec.argv.empty()) return InvalidArgument("nothing to run: the command is empty");
  if (spec.cwd.empty() || spec.cwd[0] != '/') {
    return InvalidArgument("arguments.worktree: must be an absolute path, got \"" + spec.cwd + "\"");
  }
  PARITY_ASSIGN_OR_RETURN(bool cwd_ok, PathExists(host, spec.cwd, true));
  if (!cwd_ok) return NotFound("arguments.worktree: " + spec.cwd + " is not a directory on " + host.Describe());

  // The skill's checkpoint traps, checked before anything runs.
  if (spec.phase == "gen_ckpt" && !spec.checkpoint_dir.empty()) {
    PARITY_ASSIGN_OR_RETURN(bool exists, PathExists(host, spec.checkpoint_dir, false));
    if (exists) {
      return FailedPrecondition("the initial checkpoint " + spec.checkpoint_dir + " already exists on " + host.Describe())
          .WithHint("load it (phase train), or remove it yourself to generate a new one; parity does not overwrite it");
    }
  }
  if (spec.phase == "train" && !spec.checkpoint_dir.empty()) {
    PARITY_ASSIGN_OR_RETURN(bool exists, PathExists(host, spec.checkpoint_dir, true));
    if (!exists) {
      return NotFound("the checkpoint to load, " + spec.checkpoint_dir + ", does not exist on " + host.Describe())
          .WithHint("generate it first (phase gen_ckpt with the same config), or pass the right checkpoint_dir; "
                    "torchtitan would otherwise fail late or train from random weights");
    }
  }

  std::error_code ec;
  PARITY_RETURN_IF_ERROR(MakeDirsUnder(report_dir, "jobs"));
  std::string log = LogName(spec);
  fs::path log_path = report_dir / log;
  for (const std::string& other : JobIds(report_dir)) {
    auto o = LoadJob(report_dir, other);
    if (!o.ok() || o->contains("final") || o->value("log", "") != log) continue;
    auto view = JobStatus(report_dir, other, IsRemoteJob(*o) ? nullptr : &host);
    if (view.ok() && (*view)["status"] == "running") {
      return FailedPrecondition("job " + other + " is still running and writing " + log)
          .WithHint("wait for it or cancel it first");
    }
  }
  json replaced = nullptr;
  auto log_type = fs::symlink_status(log_path, ec).type();
  if (log_type != fs::file_type::not_found && log_type != fs::file_type::regular) {
    return FailedPrecondition(log_path.string() + " is not a regular file (a symlink?); parity does not write through it")
        .WithHint("remove it, or use another report directory");
  }
  if (log_type == fs::file_type::regular) {  // keep the previous run's log, as a rerun must not erase evidence
    auto mtime = std::chrono::file_clock::to_sys(fs::last_write_time(log_path));
    std::time_t t = std::chrono::system_clock::to_time_t(mtime);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", std::gmtime(&t));
    fs::path old = log_path;
    old.replace_extension(std::string(".") + stamp + ".log");
    PARITY_RETURN_IF_ERROR(RenameUnder(report_dir, log, old.filename()).Context("moving the previous log aside"));
    replaced = old.filename().string();
  }

  json cleared = nullptr;
  if (spec.clear_checkpoint_folder && (spec.phase == "gen_ckpt" || !spec.checkpoint_dir.empty())) {
    // torchtitan ignores initial_load_path when its checkpoint folder is not empty, and a
    // stale step-1 would be moved as the new initial checkpoint: the skill's rm -rf.
    std::string folder = spec.cwd + "/" + spec.dump_folder + "/checkpoint";
    PARITY_RETURN_IF_ERROR(RunChecked(host, "clearing " + folder, {"rm", "-rf", "--", folder}).status());
    cleared = folder;
  }

  ledger::Command command{spec.argv, spec.cwd, spec.env, host.Describe()};
  json git = {{"worktree", spec.cwd}};
  {
    ExecOptions o;
    o.timeout = std::chrono::seconds(30);
    auto head = host.Exec({"git", "-C", spec.cwd, "rev-parse", "HEAD"}, o);
    if (head.ok() && head->success()) {
      std::string c = head->out.substr(0, head->out.find('\n'));
      git["commit"] = c;
      auto dirty = host.Exec({"git", "-C", spec.cwd, "status", "--porcelain", "--untracked-files=no"}, o);
      if (dirty.ok() && dirty->success()) git["dirty"] = !dirty->out.empty();
    } else {
      git["commit"] = nullptr;
      git["error"] = head.ok() ? LastLines(head->err, 3) : head.status().message();
    }
  }

  std::string id = NewJobId(spec);
  PARITY_RETURN_IF_ERROR(CreateJobDir(report_dir, id));
  if (!spec.ssh) {
    // The supervisor appends to the log with the shell's >>: it must find a regular file
    // parity made, never a link planted under that name.
    PARITY_RETURN_IF_ERROR(OpenUnder(report_dir, log, O_WRONLY | O_CREAT | O_EXCL, 0644).status());
  }
  json job = {{"schema", kJobSchema},
              {"id", id},
              {"tool", "run_training"},
              {"phase", spec.phase},
              {"side", spec.side.empty() ? json(nullptr) : json(spec.side)},
              {"config", spec.config},
              {"launcher", spec.launcher},
              {"host", host.Describe()},
              {"ssh", spec.ssh ? ToJson(*spec.ssh) : json(nullptr)},
              {"command", RecordedCommand(command)},
              {"log", log},
              {"started", ledger::NowUtc()},
              {"started_unix", UnixNow()},
              {"timeout_s", spec.timeout_s},
              {"expected_steps", spec.expected_steps ? json(*spec.expected_steps) : json(nullptr)},
              {"checkpoint_dir", spec.checkpoint_dir},
              {"checkpoint_to_move", spec.checkpoint_to_move ? json(*spec.checkpoint_to_move) : json(nullptr)},
              {"git", git},
              {"nonce", NewNonce()},
              {"notes", spec.notes}};
  job.update(ex.RecordFields());
  if (spec.ssh) job["remote_dir"] = spec.remote_job_root + "/" + id;

  ledger::Entry entry;
  entry.tool = "run_training";
  entry.action = spec.phase == "gen_ckpt" ? "gen_ckpt" : "train";
  if (!spec.side.empty()) entry.side = spec.side;
  if (!spec.config.empty()) entry.config = spec.config;
  entry.command = command;
  entry.git = git;
  entry.inputs = spec.inputs;
  entry.inputs["job_id"] = id;
  if (!cleared.is_null()) entry.inputs["cleared_checkpoint_folder"] = cleared;
  if (!replaced.is_null()) entry.inputs["previous_log_kept_as"] = replaced;
  entry.outputs = {{"log", log}};
  entry.outcome = {{"status", "running"}};
  entry.environment = spec.environment;
  PARITY_ASSIGN_OR_RETURN(std::string entry_id, ledger::Append(report_dir, entry));
  job["ledger_entry"] = entry_id;
  PARITY_RETURN_IF_ERROR(SaveJob(report_dir, job));

  auto launched = ex.Launch(report_dir, job, spec);
  if (!launched.ok()) {
    Status failure = std::move(launched).take_status();
    job["final"] = {{"status", "failed"}, {"message", failure.message()}, {"exit_code", nullptr}, {"signal", nullptr}};
    (void)SaveJob(report_dir, job);
    (void)ledger::Update(report_dir, entry_id, {{"outcome", {{"status", "failed"}, {"message", failure.message()}}}});
    return failure;
  }
  json ledger_patch = launched->value("ledger_patch", json(nullptr));
  launched->erase("ledger_patch");
  job.update(*launched);
  // Where it really ran is known now (a scheduler's job id): the ledger says so too.
  if (!ledger_patch.is_null()) PARITY_RETURN_IF_ERROR(ledger::Update(report_dir, entry_id, ledger_patch));
  PARITY_RETURN_IF_ERROR(SaveJob(report_dir, job));
  return View(report_dir, job, LogScanner(), "running", ex.Describe(job, nullptr));
}

Result<json> JobStatus(const fs::path& report_dir_in, const std::string& id, Host* host) {
  fs::path report_dir = fs::absolute(report_dir_in).lexically_normal();
  PARITY_ASSIGN_OR_RETURN(json job, LoadJob(report_dir, id));
  if (job.contains("final")) return View(report_dir, job, ScanLog(report_dir, job), job["final"]["status"]);
  PARITY_ASSIGN_OR_RETURN(OwnedExecutor ex, ExecutorForJob(job, host));
  return Refresh(*ex, report_dir, id);
}

Result<json> WaitJob(const fs::path& report_dir_in, const std::string& id, const WaitOptions& options, Host* host) {
  fs::path report_dir = fs::absolute(report_dir_in).lexically_normal();
  PARITY_ASSIGN_OR_RETURN(json job, LoadJob(report_dir, id));
  if (job.contains("final")) return JobStatus(report_dir, id, host);
  PARITY_ASSIGN_OR_RETURN(OwnedExecutor ex, ExecutorForJob(job, host));
  // A scheduler is asked no more often than the user's settings say.
  double interval = std::max(options.poll_interval_s,
                             job.contains("slurm") ? job["slurm"].value("poll_interval_s", 0.0) : 0.0);
  auto start = std::chrono::steady_clock::now();
  int64_t reported = -1;
  int reconnects = 0;
  while (true) {
    Result<json> view = Refresh(*ex, report_dir, id);
    if (!view.ok()) {
      // A lost SSH connection does not stop the remote job: reconnect and keep following it.
      if (!ex->host().is_local() && view.status().kind() == ErrorKind::kUnavailable && reconnects < 5) {
        ++reconnects;
        std::this_thread::sleep_for(std::chrono::seconds(1));
        (void)ex->host().Reconnect();
        continue;
      }
      return std::move(view).take_status().Context("following job " + id);
    }
    json v = std::move(view).value();
    // A cancel is acted on before anything else is reported: no progress after it.
    if (v["status"] == "running" && options.cancel.cancelled()) {
      if (options.cancel_job_on_cancel) return CancelJob(report_dir, id, &ex->host());
      v["message"] = "stopped waiting (request cancelled); the job keeps running";
      return v;
    }
    if (!v["steps"]["last"].is_null() && options.on_progress) {
      int64_t step = v["steps"]["last"].get<int64_t>();
      if (step > reported) {
        reported = step;
        Progress p;
        p.step = step;
        if (!v["steps"]["expected"].is_null()) p.total = v["steps"]["expected"].get<int64_t>();
        p.message = "step " + std::to_string(step) + (p.total ? "/" + std::to_string(*p.total) : "") +
                    (v["latest_loss"].is_null() ? "" : ", loss " + v["latest_loss"].get<std::string>());
        options.on_progress(p);
      }
    }
    if (v["status"] != "running") {
      v["reconnects"] = reconnects;
      return v;
    }
    if (options.max_wait_s > 0 &&
        std::chrono::steady_clock::now() - start > std::chrono::seconds(options.max_wait_s)) {
      v["message"] = v["message"].get<std::string>() + " (still running after waiting " +
                     std::to_string(options.max_wait_s) + " s; call wait or status again)";
      return v;
    }
    // Sleeps in short slices so a cancel is acted on at once, not at the next poll.
    auto next_poll = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
    while (!options.cancel.cancelled() && std::chrono::steady_clock::now() < next_poll) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

Result<json> CancelJob(const fs::path& report_dir_in, const std::string& id, Host* host) {
  fs::path report_dir = fs::absolute(report_dir_in).lexically_normal();
  PARITY_ASSIGN_OR_RETURN(json job, LoadJob(report_dir, id));
  if (job.contains("final")) return JobStatus(report_dir, id, host);
  PARITY_ASSIGN_OR_RETURN(OwnedExecutor ex, ExecutorForJob(job, host));
  // The supervisor executor signals the process group only when one of its processes
  // carries this job's nonce in its environment (set by the supervisor at start): a pid
  // file naming another process (1: every process) is refused, whatever the record says.
  PARITY_RETURN_IF_ERROR(ex->Cancel(report_dir, job));
  return Refresh(*ex, report_dir, id);
}

Result<json> ListJobs(const fs::path& report_dir_in, Host* host) {
  fs::path report_dir = fs::absolute(report_dir_in).lexically_normal();
  json jobs = json::array();
  for (const std::string& id : JobIds(report_dir)) {
    auto job = LoadJob(report_dir, id);
    bool on_host = job.ok() && host && host->Describe() == CommandHostOf(*job);
    auto v = JobStatus(report_dir, id, on_host ? host : nullptr);
    if (v.ok()) {
      jobs.push_back(*v);
    } else {
      jobs.push_back({{"id", id}, {"status", "unknown"}, {"message", v.status().message()}});
    }
  }
  return jobs;
}

Status JobFailure(const json& v) {
  std::string status = v.value("status", "failed");
  Status s(status == "cancelled" ? ErrorKind::kCancelled
           : status == "timeout" ? ErrorKind::kDeadlineExceeded
                                 : ErrorKind::kUnavailable,
           "training job " + v.value("id", "") + " " + status + ": " + v.value("message", ""));
  s.WithEvidence("job_id", v.value("id", ""));
  s.WithEvidence("command", ShellQuote(v["command"]["argv"].get<std::vector<std::string>>()));
  s.WithEvidence("cwd", v["command"].value("cwd", ""));
  s.WithEvidence("host", v.value("host", ""));
  if (!v.value("exit_code", json()).is_null()) s.WithEvidence("exit_code", v["exit_code"].dump());
  if (!v.value("signal", json()).is_null()) s.WithEvidence("signal", v["signal"].dump());
  s.WithEvidence("log", v.value("log_path", ""));
  if (v.contains("slurm")) s.WithEvidence("slurm", v["slurm"].dump());
  if (!v["findings"].empty()) {
    std::string lines;
    for (const auto& f : v["findings"]) {
      lines += f["kind"].get<std::string>() + " (line " + f["line"].dump() + "): " + f["text"].get<std::string>() + "\n";
    }
    s.WithEvidence("findings", lines);
  }
  if (!v["nan_inf"].empty()) s.WithEvidence("nan_inf", v["nan_inf"].dump());
  if (v.contains("log_tail")) s.WithEvidence("log_tail", v["log_tail"].get<std::string>());
  s.WithHint("read the findings and the log tail; fix the cause and run again (parity does not retry or work around "
             "failures)");
  return s;
}

}  // namespace parity::run
