// The slurm executor: one sbatch job per run, submitted through a Host (this machine or an
// SSH login node), followed through squeue/scontrol/sacct and stopped with scancel.
#include <ctime>

#include "domain/run/executor.h"
#include "domain/run/job_host.h"
#include "domain/run/job_record.h"
#include "domain/run/jobs.h"
#include "support/safe_file.h"

namespace parity::run {

namespace fs = std::filesystem;

namespace {

// bash -c kSlurmStatus parity-slurm-status <job dir> <log> <offset> <slurm job id>
// key=value lines (squeue's line; scontrol's and sacct's once squeue shows the job no
// longer queued or running), then "@@log" and the log from byte <offset> (at most 4 MiB;
// a negative offset skips it). The scheduler is asked before the log is read, so once it
// says the job ended the log bytes that follow are complete.
constexpr const char* kSlurmStatus = R"SH(
d=$1; log=$2; off=$3; j=$4
case $log in /*) ;; *) log=$d/$log ;; esac
echo "exists=$([ -d "$d" ] && echo 1 || echo 0)"
echo "cancel_requested=$([ -e "$d/cancel_requested" ] && echo 1 || echo 0)"
q=$(squeue -h -j "$j" -o '%T|%r|%N|%S|%M|%l' 2>/dev/null | head -n 1)
echo "squeue=$q"
case ${q%%|*} in
  ''|COMPLETED|FAILED|CANCELLED*|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)
    echo "scontrol=$(scontrol show job -o "$j" 2>/dev/null | head -n 1)"
    echo "sacct=$(sacct -n -P -X -j "$j" -o JobIDRaw,State,ExitCode,Reason,NodeList,Start,End,Elapsed,Timelimit 2>/dev/null | head -n 1)"
    ;;
esac
echo "@@log"
[ "$off" -ge 0 ] && tail -c +$((off + 1)) "$log" 2>/dev/null | head -c 4194304
exit 0
)SH";

// bash -c kSlurmCancel parity-slurm-cancel <job dir> <slurm job id>: marks the cancel as
// parity's, scancels, and returns once the scheduler no longer shows the job live.
constexpr const char* kSlurmCancel = R"SH(
d=$1; j=$2
mkdir -p -- "$d" && : > "$d/cancel_requested"
scancel "$j" || exit $?
i=0
while [ "$i" -lt 300 ]; do
  s=$(squeue -h -j "$j" -o '%T' 2>/dev/null | head -n 1)
  case $s in ''|COMPLETED|FAILED|CANCELLED*|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE) exit 0 ;; esac
  sleep 0.2; i=$((i + 1))
done
echo "job $j still $s 60 s after scancel" >&2
exit 0
)SH";

// Slurm prints local times without a zone ("2026-12-01T21:39:13").
std::optional<int64_t> LocalTime(const std::string& text) {
  std::tm tm{};
  if (text.empty() || !strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&tm));
}

class Slurm : public Executor {
 public:
  Slurm(Host& host, std::optional<SlurmSettings> settings) : host_(host), settings_(std::move(settings)) {}
  std::string kind() const override { return "slurm"; }
  Host& host() override { return host_; }
  json RecordFields() const override { return {{"executor", "slurm"}}; }

  Result<json> Launch(const fs::path& report_dir, const json& job, const JobSpec& spec) override {
    if (!settings_) return Internal("the slurm executor was opened without settings and cannot submit");
    const std::string id = job["id"];
    // The job directory as an absolute path on the submitting host: sbatch resolves a
    // relative --output against the job's working directory, not against ours.
    PARITY_ASSIGN_OR_RETURN(ProcessResult made,
                            RunChecked(host_, "creating the job directory",
                                       {"bash", "-c", "mkdir -p -- \"$1\" && cd -- \"$1\" && pwd", "parity-mkdir",
                                        HostJobDir(report_dir, job)}));
    std::string dir = made.out.substr(0, made.out.find('\n'));
    BatchJob batch{id, spec.argv, spec.env, spec.cwd,
                   IsRemoteJob(job) ? dir + "/train.log" : HostLogArg(report_dir, job), spec.timeout_s};
    std::string script = BatchScript(*settings_, batch);
    std::string script_path = dir + "/batch.sh";
    PARITY_ASSIGN_OR_RETURN(std::vector<std::string> sbatch, SbatchArgv(batch, script_path));
    // The script is recorded beside job.json whatever the host; a remote host gets its own copy.
    PARITY_RETURN_IF_ERROR(WriteFileUnder(report_dir, fs::path("jobs") / id / "batch.sh", script));
    if (IsRemoteJob(job)) PARITY_RETURN_IF_ERROR(UploadFile(host_, script, script_path));
    PARITY_ASSIGN_OR_RETURN(ProcessResult submitted, RunChecked(host_, "submitting the batch job (sbatch)", sbatch, 120));
    std::string out = submitted.out.substr(0, submitted.out.find('\n'));
    std::string job_id = out.substr(0, out.find(';'));
    if (job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos) {
      return Unavailable("sbatch printed no job id")
          .WithEvidence("command", ShellQuote(sbatch))
          .WithEvidence("output", LastLines(submitted.out + submitted.err));
    }
    json slurm = {{"job_id", job_id},
                  {"cluster", out.find(';') == std::string::npos ? json(nullptr) : json(out.substr(out.find(';') + 1))},
                  {"submit_host", host_.Describe()},
                  {"sbatch", sbatch},
                  {"batch_script", (fs::path("jobs") / id / "batch.sh").string()},
                  {"settings", ToJson(*settings_)},
                  {"poll_interval_s", settings_->poll_interval_s}};
    std::string where = "slurm job " + job_id + " via " + host_.Describe();
    json ledger_patch = {{"command", {{"host", where}}},
                         {"inputs", {{"executor", "slurm"}, {"slurm", slurm}}},
                         {"outputs", {{"batch_script", slurm["batch_script"]}}}};
    ledger_patch["inputs"]["slurm"]["batch_script_text"] = script;
    return json{{"slurm", slurm}, {"host", where}, {"ledger_patch", ledger_patch}};
  }

  Result<JobPoll> Poll(const fs::path& report_dir, const json& job, int64_t offset) override {
    const std::string job_id = job["slurm"]["job_id"];
    std::vector<std::string> argv = {"bash", "-c", kSlurmStatus, "parity-slurm-status", HostJobDir(report_dir, job),
                                     HostLogArg(report_dir, job), std::to_string(offset), job_id};
    PARITY_ASSIGN_OR_RETURN(StatusOutput out, RunStatusScript(host_, argv, "Slurm job " + job_id));
    std::map<std::string, std::string>& kv = out.values;
    JobPoll p;
    p.log_bytes = std::move(out.log);
    SlurmState st = ParseSlurmState(kv["squeue"], kv["scontrol"], kv["sacct"]);
    p.scheduler = st;
    if (!st.known) {
      p.ended = true;
      p.exists = false;
      p.scheduler_reason = "squeue, scontrol and sacct no longer know Slurm job " + job_id +
                           " (forgotten by the controller and not in accounting)";
      return p;
    }
    if (st.live) return p;
    p.ended = true;
    p.exit_code = st.signal ? 128 + *st.signal : st.exit_code.value_or(0);
    p.finished_unix = LocalTime(st.end);
    std::string where = st.nodes.empty() ? "" : " on " + st.nodes;
    std::string reason = st.reason.empty() || st.reason == "None" ? "" : ", reason " + st.reason;
    if (st.state == "TIMEOUT") {
      p.timed_out = true;
      p.scheduler_reason = "the scheduler stopped Slurm job " + job_id + where + " at its time limit of " +
                           (st.time_limit.empty() ? std::string("?") : st.time_limit) + " (" + st.state + reason + ")";
    } else if (st.state == "CANCELLED") {
      p.cancel_requested = true;
      p.scheduler_reason = kv["cancel_requested"] == "1"
                               ? "cancelled on request (scancel " + job_id + ")"
                               : "Slurm job " + job_id + " was cancelled outside parity (" + st.state_detail + reason + ")";
    } else if (st.state != "COMPLETED" && st.state != "FAILED") {
      p.scheduler_failure = true;
      p.scheduler_reason = "the scheduler ended Slurm job " + job_id + where + ": " + st.state + reason;
    }
    return p;
  }

  Status Cancel(const fs::path& report_dir, const json& job) override {
    const std::string job_id = job["slurm"]["job_id"];
    return RunChecked(host_, "cancelling Slurm job " + job_id + " (scancel)",
                      {"bash", "-c", kSlurmCancel, "parity-slurm-cancel", HostJobDir(report_dir, job), job_id}, 90)
        .status();
  }

  json Describe(const json& job, const JobPoll* poll) const override {
    if (!job.contains("slurm")) return nullptr;
    const json& s = job["slurm"];
    json d = {{"job_id", s["job_id"]}, {"submit_host", s.value("submit_host", "")},
              {"batch_script", s.value("batch_script", "")}};
    json out = json::object();
    if (!poll) out["message"] = "submitted as Slurm job " + s["job_id"].get<std::string>();
    if (poll && poll->scheduler) {
      d.update(poll->scheduler->ToJson());
      const SlurmState& st = *poll->scheduler;
      if (st.live) {
        // Queued: the scheduler's state and reason say it all; running: they lead the step line.
        std::string said = "Slurm job " + s["job_id"].get<std::string>() + " " + st.state +
                           (st.reason.empty() || st.reason == "None" ? "" : " (" + st.reason + ")") +
                           (st.nodes.empty() ? "" : " on " + st.nodes);
        out[st.state == "RUNNING" ? "message_prefix" : "message"] = said;
      }
    }
    out["slurm"] = d;
    out["poll_after_s"] = s.value("poll_interval_s", 2.0);
    return out;
  }

 private:
  Host& host_;
  std::optional<SlurmSettings> settings_;
};

}  // namespace

std::unique_ptr<Executor> SlurmExecutor(Host& host, std::optional<SlurmSettings> settings) {
  return std::make_unique<Slurm>(host, std::move(settings));
}

}  // namespace parity::run
