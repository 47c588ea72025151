// The local and ssh executors: the detached supervisor of job_scripts.h on a Host.
#include "domain/run/executor.h"
#include "domain/run/job_host.h"
#include "domain/run/job_record.h"
#include "domain/run/job_scripts.h"
#include "domain/run/jobs.h"

namespace parity::run {

namespace fs = std::filesystem;

namespace {

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Supervisor : public Executor {
 public:
  explicit Supervisor(Host& host) : host_(host) {}
  std::string kind() const override { return host_.is_local() ? "local" : "ssh"; }
  Host& host() override { return host_; }

  Result<json> Launch(const fs::path& report_dir, const json& job, const JobSpec& spec) override {
    std::vector<std::string> argv = {"bash", "-c", kLauncher, "parity-launch", kSupervisor, HostJobDir(report_dir, job),
                                     HostLogArg(report_dir, job), std::to_string(spec.timeout_s), spec.cwd,
                                     job.value("nonce", ""), "--"};
    if (!spec.env.empty()) {
      argv.push_back("env");
      for (const auto& [k, v] : spec.env) argv.push_back(k + "=" + v);
    }
    argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
    auto launched = RunChecked(host_, "starting the training", argv);
    if (!launched.ok()) return std::move(launched).take_status();
    int supervisor = std::atoi(launched->out.c_str());
    if (supervisor <= 0) {
      return Unavailable("the launcher printed no supervisor pid")
          .WithEvidence("output", LastLines(launched->out + launched->err));
    }
    return json{{"supervisor_pid", supervisor}};
  }

  Result<JobPoll> Poll(const fs::path& report_dir, const json& job, int64_t offset) override {
    std::vector<std::string> argv = {"bash", "-c", kStatus, "parity-status", HostJobDir(report_dir, job),
                                     HostLogArg(report_dir, job), std::to_string(offset),
                                     std::to_string(job.value("supervisor_pid", 0)), job.value("nonce", "")};
    PARITY_ASSIGN_OR_RETURN(StatusOutput out, RunStatusScript(host_, argv, "job " + job["id"].get<std::string>()));
    std::map<std::string, std::string>& kv = out.values;
    JobPoll p;
    p.log_bytes = std::move(out.log);
    p.exists = kv["exists"] == "1";
    const std::string& pid = kv["pid"];
    bool supervisor_alive = kv["supervisor_alive"] == "1", group_alive = kv["group_alive"] == "1";
    if (!kv["exit_code"].empty()) p.exit_code = std::atoi(kv["exit_code"].c_str());
    if (!kv["finished"].empty()) p.finished_unix = std::atoll(kv["finished"].c_str());
    p.timed_out = kv["timed_out"] == "1";
    p.cancel_requested = kv["cancel_requested"] == "1";
    // Just launched: the supervisor may not have written its pid files yet.
    bool starting = !p.exit_code && !supervisor_alive && !group_alive && p.exists &&
                    UnixNow() - job.value("started_unix", int64_t{0}) < 30 && pid.empty();
    p.ended = p.exit_code || (!supervisor_alive && !group_alive && !starting);
    return p;
  }

  Status Cancel(const fs::path& report_dir, const json& job) override {
    return RunChecked(host_, "cancelling job " + job["id"].get<std::string>(),
                      {"bash", "-c", kCancel, "parity-cancel", HostJobDir(report_dir, job), "10",
                       job.value("nonce", "")},
                      90)
        .status();
  }

 private:
  Host& host_;
};

}  // namespace

std::unique_ptr<Executor> SupervisorExecutor(Host& host) { return std::make_unique<Supervisor>(host); }

std::string ExecutorKindOf(const json& job) {
  if (job.value("executor", "") == "slurm") return "slurm";
  return IsRemoteJob(job) ? "ssh" : "local";
}

// A record is data: parity never connects to a host because a record names it. A local
// job is followed here; a remote one (ssh, or slurm through a login node) only on the host
// the caller opened (from its arguments or the user's policy), which must be the record's.
Result<OwnedExecutor> ExecutorForJob(const json& job, Host* host) {
  std::unique_ptr<Host> owned;
  const std::string id = job.value("id", "");
  if (!host) {
    if (IsRemoteJob(job)) {
      return FailedPrecondition("job " + id + " ran on " + job.value("host", "") +
                                "; parity does not connect to a host named only by a job record")
          .WithHint("pass the host again (ssh: {host, username, port} as when the job was started) to poll or cancel it");
    }
    PARITY_ASSIGN_OR_RETURN(owned, OpenHost(std::nullopt));
    host = owned.get();
  }
  if (host->Describe() != CommandHostOf(job)) {
    return FailedPrecondition("job " + id + " ran on " + CommandHostOf(job) + ", not on " + host->Describe())
        .WithHint("pass the job's own host");
  }
  std::unique_ptr<Executor> executor =
      ExecutorKindOf(job) == "slurm" ? SlurmExecutor(*host, std::nullopt) : SupervisorExecutor(*host);
  return OwnedExecutor(std::move(owned), std::move(executor));
}

Result<OwnedExecutor> OpenExecutor(const ExecutorChoice& choice) {
  if (choice.kind != "local" && choice.kind != "ssh" && choice.kind != "slurm") {
    return InvalidArgument("executor: expected local, ssh or slurm, got \"" + choice.kind + "\"");
  }
  if (choice.kind == "ssh" && !choice.ssh) return InvalidArgument("executor ssh needs the SSH host");
  if (choice.kind == "local" && choice.ssh) return InvalidArgument("executor local cannot take an SSH host");
  if (choice.kind == "slurm" && !choice.slurm) return InvalidArgument("executor slurm needs the user's Slurm settings");
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Host> host, OpenHost(choice.ssh));
  Host& h = *host;
  std::unique_ptr<Executor> executor = choice.kind == "slurm" ? SlurmExecutor(h, choice.slurm) : SupervisorExecutor(h);
  return OwnedExecutor(std::move(host), std::move(executor));
}

}  // namespace parity::run
