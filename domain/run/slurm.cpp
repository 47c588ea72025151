#include "domain/run/slurm.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "support/file_read.h"
#include "support/json_reader.h"
#include "support/subprocess.h"

namespace parity::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool Plain(const std::string& s, const char* extra) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(extra, c)) return false;
  }
  return true;
}

bool HasControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// Options parity sets itself (per job, on the command line) or that would break following
// the job; and the options the settings have a key for.
struct Owned {
  const char* long_name;
  char short_name;
  const char* why;
};
constexpr Owned kOwned[] = {
    {"--output", 'o', "parity sets the log itself"},
    {"--error", 'e', "parity keeps stderr in the log"},
    {"--chdir", 'D', "parity runs in its worktree"},
    {"--job-name", 'J', "parity names the job after its own id"},
    {"--open-mode", 0, "parity appends to the log"},
    {"--parsable", 0, "parity reads the job id"},
    {"--wrap", 0, "parity submits its own batch script"},
    {"--array", 'a', "one parity run is one job"},
    {"--input", 'i', "a training reads no stdin"},
    {"--partition", 'p', "use the key \"partition\""},
    {"--account", 'A', "use the key \"account\""},
    {"--qos", 'q', "use the key \"qos\""},
    {"--nodes", 'N', "use the key \"nodes\""},
    {"--ntasks-per-node", 0, "use the key \"tasks_per_node\""},
    {"--ntasks", 'n', "use the key \"tasks_per_node\""},
    {"--cpus-per-task", 'c', "use the key \"cpus_per_task\""},
    {"--gpus-per-node", 0, "use the key \"gpus_per_node\""},
    {"--time", 't', "use the key \"time_limit\" (or the run's timeout_s)"},
};

// Why an extra #SBATCH line is refused, or empty.
std::string RefusedOption(const std::string& line) {
  if (line.size() < 2 || line[0] != '-') return "must be an sbatch option (starting with -)";
  if (HasControl(line)) return "must be one line without control characters";
  std::string name = line.substr(0, line.find_first_of("= \t"));
  for (const auto& o : kOwned) {
    bool match = name == o.long_name ||
                 (o.short_name && line.size() >= 2 && line[0] == '-' && line[1] == o.short_name && line[1] != '-');
    if (match) return std::string(o.long_name) + " is refused: " + o.why;
  }
  return "";
}

// Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Whole minutes, rounded up.
std::optional<int64_t> TimeMinutes(const std::string& t) {
  if (t.empty() || t.find_first_not_of("0123456789:-") != std::string::npos) return std::nullopt;
  int64_t days = 0;
  std::string rest = t;
  size_t dash = t.find('-');
  bool has_days = dash != std::string::npos;
  if (has_days) {
    if (dash == 0) return std::nullopt;
    days = std::atoll(t.substr(0, dash).c_str());
    rest = t.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  std::stringstream ss(rest);
  std::string p;
  while (std::getline(ss, p, ':')) {
    if (p.empty() || p.find('-') != std::string::npos) return std::nullopt;
    parts.push_back(std::atoll(p.c_str()));
  }
  int64_t seconds = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    if (parts.empty() || parts.size() > 3) return std::nullopt;
    seconds = days * 86400 + parts[0] * 3600 + (parts.size() > 1 ? parts[1] * 60 : 0) + (parts.size() > 2 ? parts[2] : 0);
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];
  } else if (parts.size() == 3) {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {
    return std::nullopt;
  }
  return (seconds + 59) / 60;
}

std::string Quote(const std::string& word) { return ShellQuote({word}); }

}  // namespace

Result<SlurmSettings> ParseSlurmSettings(const json& value, const std::string& name) {
  PARITY_RETURN_IF_ERROR(ExpectObject(value, name));
  SlurmSettings s;
  JsonReader r(value, name);
  r.Optional("partition", s.partition).Optional("account", s.account).Optional("qos", s.qos);
  r.Optional("nodes", s.nodes).Optional("tasks_per_node", s.tasks_per_node).Optional("cpus_per_task", s.cpus_per_task);
  r.Optional("gpus_per_node", s.gpus_per_node).Optional("npus_per_node", s.npus_per_node);
  r.Optional("time_limit", s.time_limit).Optional("sbatch_lines", s.sbatch_lines).Optional("srun_args", s.srun_args);
  r.Optional("srun", s.srun).OneOf("srun", s.srun, {"auto", "always", "never"});
  r.Optional("poll_interval_s", s.poll_interval_s);
  r.Allow("$comment");
  for (auto [key, field] : {std::pair{"partition", &s.partition}, {"account", &s.account}, {"qos", &s.qos}}) {
    if (r.ok() && *field && !Plain(**field, "_.,:+-")) r.Fail(r.Child(key), "\"" + **field + "\" is not a Slurm name");
  }
  if (r.ok() && s.nodes < 1) r.Fail(r.Child("nodes"), "must be at least 1");
  if (r.ok() && s.tasks_per_node < 1) r.Fail(r.Child("tasks_per_node"), "must be at least 1");
  if (r.ok() && s.cpus_per_task && *s.cpus_per_task < 1) r.Fail(r.Child("cpus_per_task"), "must be at least 1");
  if (r.ok() && s.gpus_per_node && *s.gpus_per_node < 0) r.Fail(r.Child("gpus_per_node"), "must not be negative");
  if (r.ok() && s.npus_per_node && *s.npus_per_node < 0) r.Fail(r.Child("npus_per_node"), "must not be negative");
  if (r.ok() && s.time_limit && !TimeMinutes(*s.time_limit)) {
    r.Fail(r.Child("time_limit"), "\"" + *s.time_limit + "\" is not a Slurm time (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S)");
  }
  if (r.ok() && !(s.poll_interval_s >= 0.2 && s.poll_interval_s <= 600)) {
    r.Fail(r.Child("poll_interval_s"), "must be between 0.2 and 600");
  }
  for (size_t i = 0; r.ok() && i < s.sbatch_lines.size(); ++i) {
    std::string why = RefusedOption(s.sbatch_lines[i]);
    if (!why.empty()) r.Fail(r.Child("sbatch_lines") + "[" + std::to_string(i) + "]", "\"" + s.sbatch_lines[i] + "\": " + why);
  }
  for (size_t i = 0; r.ok() && i < s.srun_args.size(); ++i) {
    const std::string& a = s.srun_args[i];
    if (a.size() < 2 || a[0] != '-' || HasControl(a)) {
      r.Fail(r.Child("srun_args") + "[" + std::to_string(i) + "]", "\"" + a + "\" is not one srun option");
    }
  }
  PARITY_RETURN_IF_ERROR(r.Finish());
  return s;
}

json ToJson(const SlurmSettings& s) {
  auto opt = [](const auto& o) { return o ? json(*o) : json(nullptr); };
  return {{"partition", opt(s.partition)},       {"account", opt(s.account)},
          {"qos", opt(s.qos)},                   {"nodes", s.nodes},
          {"tasks_per_node", s.tasks_per_node},  {"cpus_per_task", opt(s.cpus_per_task)},
          {"gpus_per_node", opt(s.gpus_per_node)}, {"npus_per_node", opt(s.npus_per_node)},
          {"time_limit", opt(s.time_limit)},     {"sbatch_lines", s.sbatch_lines},
          {"srun_args", s.srun_args},            {"srun", s.srun},
          {"poll_interval_s", s.poll_interval_s}};
}

fs::path UserSlurmSettingsPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return fs::path(xdg) / "parity/slurm.json";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/") / ".config/parity/slurm.json";
}

Result<SlurmSettings> ReadUserSlurmSettings() {
  fs::path path = UserSlurmSettingsPath();
  auto text = ReadFileLimited(path, 1u << 20);
  if (!text.ok()) {
    return NotFound("the slurm executor needs the user's Slurm settings in " + path.string() + ", and there is none")
        .WithHint("write it yourself (a caller of parity cannot), e.g. {\"partition\": \"debug\", \"nodes\": 1, "
                  "\"npus_per_node\": 8, \"time_limit\": \"02:00:00\", \"sbatch_lines\": [\"--exclusive\"]}; "
                  "see docs/slurm.md");
  }
  json value = json::parse(*text, nullptr, false);
  if (value.is_discarded()) return InvalidArgument(path.string() + ": not valid JSON");
  return ParseSlurmSettings(value, path.string());
}

std::optional<std::string> TimeLimitFor(const SlurmSettings& s, int timeout_s) {
  std::optional<int64_t> from_timeout;
  if (timeout_s > 0) from_timeout = (timeout_s + 59) / 60;
  if (!s.time_limit) return from_timeout ? std::optional<std::string>(std::to_string(*from_timeout)) : std::nullopt;
  if (from_timeout && *from_timeout < TimeMinutes(*s.time_limit).value_or(INT64_MAX)) return std::to_string(*from_timeout);
  return s.time_limit;
}

std::string BatchScript(const SlurmSettings& s, const BatchJob& job) {
  std::string out = "#!/bin/bash\n# parity job " + job.id + ": generated from the user's Slurm settings; parity's own "
                    "options (job name, log, working directory) are on the sbatch command line.\n";
  auto line = [&](const std::string& option) { out += "#SBATCH " + option + "\n"; };
  if (s.partition) line("--partition=" + *s.partition);
  if (s.account) line("--account=" + *s.account);
  if (s.qos) line("--qos=" + *s.qos);
  line("--nodes=" + std::to_string(s.nodes));
  line("--ntasks-per-node=" + std::to_string(s.tasks_per_node));
  if (s.cpus_per_task) line("--cpus-per-task=" + std::to_string(*s.cpus_per_task));
  if (s.gpus_per_node) line("--gpus-per-node=" + std::to_string(*s.gpus_per_node));
  if (s.npus_per_node) line("--gres=npu:" + std::to_string(*s.npus_per_node));
  if (auto t = TimeLimitFor(s, job.timeout_s)) line("--time=" + *t);
  for (const auto& extra : s.sbatch_lines) line(extra);
  out += "set -o pipefail\n";
  for (const auto& [k, v] : job.env) out += "export " + k + "=" + Quote(v) + "\n";
  const bool srun = s.srun == "always" || (s.srun == "auto" && s.nodes * s.tasks_per_node > 1);
  if (!srun) {
    out += "exec " + ShellQuote(job.argv) + "\n";
    return out;
  }
  // Every rank gets torchrun's variables and its lines the "[rankN]:" prefix of torchrun's
  // --tee; the first node is the rendezvous host.
  out += "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n";
  out += "export MASTER_PORT=\"${MASTER_PORT:-29500}\"\n";
  std::vector<std::string> srun_argv = {"srun", "--kill-on-bad-exit=1"};
  srun_argv.insert(srun_argv.end(), s.srun_args.begin(), s.srun_args.end());
  srun_argv.insert(srun_argv.end(),
                   {"bash", "-c",
                    "export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS; "
                    "\"$@\" 2>&1 | sed -u \"s/^/[rank$SLURM_PROCID]:/\"; exit \"${PIPESTATUS[0]}\"",
                    "parity-rank"});
  srun_argv.insert(srun_argv.end(), job.argv.begin(), job.argv.end());
  out += "exec " + ShellQuote(srun_argv) + "\n";
  return out;
}

Result<std::vector<std::string>> SbatchArgv(const BatchJob& job, const std::string& script_path) {
  // sbatch expands %j, %N, ... in --output; a path with % would land elsewhere.
  for (const auto& [what, path] : {std::pair{"the log path", job.log}, {"the working directory", job.cwd}}) {
    if (path.find('%') != std::string::npos || HasControl(path)) {
      return InvalidArgument(std::string(what) + " " + path + " holds % or a control character, which sbatch would "
                             "read as a filename pattern")
          .WithHint("use a report directory and worktree whose paths have no %");
    }
  }
  return std::vector<std::string>{"sbatch", "--parsable", "--job-name=parity-" + job.id, "--output=" + job.log,
                                  "--open-mode=append", "--chdir=" + job.cwd, script_path};
}

bool IsFinalSlurmState(const std::string& state) {
  static const char* kFinal[] = {"COMPLETED", "FAILED",    "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
                                 "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"};
  return std::any_of(std::begin(kFinal), std::end(kFinal), [&](const char* f) { return state == f; });
}

json SlurmState::ToJson() const {
  auto str = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  return {{"state", str(state)},        {"state_detail", str(state_detail)}, {"reason", str(reason)},
          {"nodes", str(nodes)},        {"start", str(start)},               {"end", str(end)},
          {"elapsed", str(elapsed)},    {"time_limit", str(time_limit)},
          {"exit_code", exit_code ? json(*exit_code) : json(nullptr)},
          {"signal", signal ? json(*signal) : json(nullptr)}, {"source", str(source)}};
}

namespace {

std::vector<std::string> SplitBar(const std::string& line) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream ss(line);
  while (std::getline(ss, item, '|')) out.push_back(item);
  if (!line.empty() && line.back() == '|') out.push_back("");
  return out;
}

// "rc:sig" as sacct and scontrol print ExitCode.
void ReadExitCode(const std::string& text, SlurmState& s) {
  size_t colon = text.find(':');
  if (text.empty() || colon == std::string::npos) return;
  s.exit_code = std::atoi(text.substr(0, colon).c_str());
  int sig = std::atoi(text.substr(colon + 1).c_str());
  s.signal = sig > 0 ? std::optional<int>(sig) : std::nullopt;
}

std::string Unknown(const std::string& v) { return v == "Unknown" || v == "None" || v == "(null)" ? "" : v; }

}  // namespace

SlurmState ParseSlurmState(const std::string& squeue, const std::string& scontrol, const std::string& sacct) {
  SlurmState s;
  std::vector<std::string> q = SplitBar(squeue);
  if (q.size() >= 6 && !q[0].empty()) {
    s.known = true;
    s.source = "squeue";
    s.state = s.state_detail = q[0];
    s.reason = q[1];
    s.nodes = q[2];
    s.start = Unknown(q[3]);
    s.elapsed = q[4];
    s.time_limit = q[5];
    s.live = !IsFinalSlurmState(s.state);
    if (s.live) return s;
  }
  // scontrol show job -o: one line of Key=Value words.
  std::map<std::string, std::string> c;
  {
    std::stringstream ss(scontrol);
    std::string word;
    while (ss >> word) {
      size_t eq = word.find('=');
      if (eq != std::string::npos && !c.count(word.substr(0, eq))) c[word.substr(0, eq)] = word.substr(eq + 1);
    }
  }
  std::vector<std::string> a = SplitBar(sacct);
  bool have_sacct = a.size() >= 9 && !a[1].empty();
  if (c.count("JobState")) {
    s.known = true;
    s.source = "scontrol";
    s.state = s.state_detail = c["JobState"];
    s.reason = c["Reason"];
    s.nodes = Unknown(c["NodeList"]);
    s.start = Unknown(c["StartTime"]);
    s.end = Unknown(c["EndTime"]);
    s.elapsed = c["RunTime"];
    s.time_limit = c["TimeLimit"];
    ReadExitCode(c["ExitCode"], s);
    s.live = !IsFinalSlurmState(s.state);
    if (have_sacct && s.state_detail == a[1].substr(0, a[1].find(' '))) s.state_detail = a[1];
    return s;
  }
  if (have_sacct) {
    s.known = true;
    s.source = "sacct";
    s.state_detail = a[1];
    s.state = a[1].substr(0, a[1].find(' '));
    ReadExitCode(a[2], s);
    s.reason = a[3];
    s.nodes = Unknown(a[4]);
    s.start = Unknown(a[5]);
    s.end = Unknown(a[6]);
    s.elapsed = a[7];
    s.time_limit = a[8];
    s.live = !IsFinalSlurmState(s.state);
  }
  return s;
}

}  // namespace parity::run
