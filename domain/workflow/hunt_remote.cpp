#include "domain/workflow/hunt_remote.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include "domain/inject/inject.h"
#include "support/file_read.h"
#include "support/subprocess.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kMarker = "parity-hunt.json";  // in a remote worktree's own git dir
// Read into memory to be uploaded: files inject_prints touched (it reads at most 64 MiB of
// one), and the untracked files carried into a remote worktree (the shadow copies at most
// 512 MiB of one).
constexpr uint64_t kMaxProbedFileBytes = uint64_t{64} << 20;
constexpr uint64_t kMaxCarriedFileBytes = uint64_t{512} << 20;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

Result<ProcessResult> Run(run::Host& host, const std::vector<std::string>& argv, const CancellationToken& cancel,
                          const std::string& what, std::string stdin_data = "") {
  run::ExecOptions o;
  o.cancel = cancel;
  o.stdin_data = std::move(stdin_data);
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};
  auto r = host.Exec(argv, o);
  if (!r.ok()) return std::move(r).take_status().Context(what);
  if (r->cancelled) return Cancelled(what + ": cancelled");
  return r;
}

Status RunOk(run::Host& host, const std::vector<std::string>& argv, const CancellationToken& cancel,
             const std::string& what, std::string stdin_data = "") {
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, Run(host, argv, cancel, what, std::move(stdin_data)));
  if (!r.success()) return run::HostCommandFailure(what, host, argv, r);
  return Status::Ok();
}

Result<bool> Exists(run::Host& host, const std::string& path, const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, Run(host, {"test", "-e", path}, cancel, "test -e " + path));
  return r.success();
}

// The worktree's own git dir (…/.git/worktrees/<name>), where parity keeps its marker.
Result<std::string> GitDirOf(run::Host& host, const std::string& worktree, const CancellationToken& cancel) {
  return HostGit(host, worktree, {"rev-parse", "--absolute-git-dir"}, cancel, "git rev-parse in " + worktree);
}

Result<bool> ParityMade(run::Host& host, const std::string& worktree, const CancellationToken& cancel) {
  auto dir = GitDirOf(host, worktree, cancel);
  if (!dir.ok()) return false;
  return Exists(host, *dir + "/" + kMarker, cancel);
}

std::string KeyUpper(std::string key) {
  for (char& c : key) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return key;
}

}  // namespace

Result<run::SshTarget> HuntSshTarget(const ComparerConfig& c, const ComparerSide& side, const std::string& key) {
  if (!side.ssh || side.ssh->host.empty()) {
    return InvalidArgument(c.name + "." + key + ".ssh.host: required when mode is remote");
  }
  const ComparerSsh& s = *side.ssh;
  run::SshTarget t;
  t.host = s.host;
  t.user = s.username;
  t.port = s.port;
  if (s.identity_file) t.identity_file = *s.identity_file;
  if (s.known_hosts) t.known_hosts = *s.known_hosts;
  if (s.password_env) {
    t.password_env = *s.password_env;
  } else if (s.password) {
    // The user's own file holds it; libssh reads it from this process's environment only.
    std::string name = "PARITY_HUNT_SSH_PASSWORD_" + KeyUpper(key);
    if (::setenv(name.c_str(), s.password->c_str(), 1) != 0) {
      return Internal("cannot set " + name + " in parity's environment");
    }
    t.password_env = name;
  }
  return t;
}

json RunTrainingRemoteArgs(const run::SshTarget& t) {
  json ssh = {{"host", t.host}, {"port", t.port}};
  if (!t.user.empty()) ssh["username"] = t.user;
  if (t.identity_file) ssh["identity_file"] = t.identity_file->string();
  if (t.known_hosts) ssh["known_hosts"] = t.known_hosts->string();
  if (t.password_env) ssh["password_env"] = *t.password_env;
  return {{"mode", "remote"}, {"ssh", ssh}};
}

Result<std::unique_ptr<run::Host>> ConnectSide(const run::SshTarget& target, const std::string& where) {
  auto host = run::ConnectSsh(target);
  if (host.ok()) return host;
  Status s = std::move(host).take_status().Context(where);
  const bool host_key = std::any_of(s.evidence().begin(), s.evidence().end(),
                                    [](const EvidenceItem& e) { return e.name == "fingerprint"; });
  if (host_key) {  // unknown or changed: the config can also name the file that has it
    s.WithHint(s.hint() + "; or point the side's ssh.known_hosts (parity's addition to the config) at a file that has it");
  }
  return s;
}

Status CreateRemoteWorktree(run::Host& host, const SideSource& src, const std::string& path,
                            const fs::path& local_worktree, bool remove_stale, const CancellationToken& cancel) {
  const std::string what = src.where + ": worktree " + path;
  PARITY_ASSIGN_OR_RETURN(bool there, Exists(host, path, cancel));
  if (there) {
    PARITY_ASSIGN_OR_RETURN(bool ours, ParityMade(host, path, cancel));
    const std::string remove = "`" + ShellQuote({"git", "-C", src.top, "worktree", "remove", "--force", path}) + "` on " +
                               host.Describe();
    if (!ours) {
      return FailedPrecondition(what + " already exists and is not a worktree parity made; nothing was changed")
          .WithHint("move it away, or remove it if it is a leftover (" + remove + ")");
    }
    if (!remove_stale) {
      return FailedPrecondition(what + " is parity's own worktree of an earlier run, in the way of this one; nothing "
                                "was removed")
          .WithHint("run again with --yes and parity removes it first, or remove it yourself: " + remove);
    }
    PARITY_RETURN_IF_ERROR(RemoveRemoteWorktree(host, src.top, path, cancel));
  }
  PARITY_RETURN_IF_ERROR(HostGit(host, src.top, {"worktree", "add", "--detach", path, src.commit}, cancel,
                                 what + ": git worktree add").status());
  PARITY_ASSIGN_OR_RETURN(std::string gitdir, GitDirOf(host, path, cancel));
  json marker = {{"created_by", "parity"}, {"tool", "parity hunt"}, {"commit", src.commit}, {"path", path}};
  PARITY_RETURN_IF_ERROR(run::UploadFile(host, marker.dump(2) + "\n", gitdir + "/" + kMarker));

  // The same bytes as the local worktree: what audit_workspace copied there by class.
  auto local = run::MakeLocalHost();
  PARITY_ASSIGN_OR_RETURN(std::string diff, HostGit(*local, local_worktree.string(), {"diff", "--binary", "HEAD"}, cancel,
                                                    "git diff in " + local_worktree.string()));
  if (!diff.empty()) {
    PARITY_RETURN_IF_ERROR(RunOk(host, {"git", "-C", path, "apply", "--binary", "-"}, cancel,
                                 what + ": git apply of the carried changes", diff + "\n"));
  }
  PARITY_ASSIGN_OR_RETURN(std::string others, HostGit(*local, local_worktree.string(),
                                                      {"ls-files", "-o", "--exclude-standard", "-z"}, cancel,
                                                      "git ls-files in " + local_worktree.string()));
  for (const std::string& rel : SplitNul(others)) {
    if (rel.back() == '/') continue;
    PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadFileLimited(local_worktree / rel, kMaxCarriedFileBytes));
    std::string to = path + "/" + rel;
    PARITY_RETURN_IF_ERROR(RunOk(host, {"mkdir", "-p", "--", fs::path(to).parent_path().string()}, cancel, what + ": mkdir"));
    PARITY_RETURN_IF_ERROR(run::UploadFile(host, bytes, to));
  }
  return Status::Ok();
}

Status RemoveRemoteWorktree(run::Host& host, const std::string& top, const std::string& path,
                            const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(bool ours, ParityMade(host, path, cancel));
  if (!ours) {
    return FailedPrecondition(path + " on " + host.Describe() + " is not a worktree parity made; not removed");
  }
  PARITY_RETURN_IF_ERROR(HostGit(host, top, {"worktree", "remove", "--force", path}, cancel,
                                 "git worktree remove " + path + " on " + host.Describe()).status());
  return HostGit(host, top, {"worktree", "prune"}, cancel, "git worktree prune on " + host.Describe()).status();
}

Result<double> RemoteClock(run::Host& host) {
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, Run(host, {"date", "+%s.%N"}, {}, "reading the clock of " + host.Describe()));
  if (!r.success()) return run::HostCommandFailure("date", host, {"date", "+%s.%N"}, r);
  char* end = nullptr;
  std::string text = Trim(r.out);
  double t = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return Unavailable("the clock of " + host.Describe() + " reads \"" + text + "\"");
  return t;
}

Result<std::vector<RemoteFile>> ListRemoteFiles(run::Host& host, const std::string& root, int max_depth,
                                                const CancellationToken& cancel) {
  const std::vector<std::string> argv = {"find", root, "-maxdepth", std::to_string(max_depth), "-type", "f",
                                         "-printf", "%T@\\t%s\\t%p\\0"};
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, Run(host, argv, cancel, "listing " + root + " on " + host.Describe()));
  std::vector<RemoteFile> out;
  if (!r.success()) {
    PARITY_ASSIGN_OR_RETURN(bool there, Exists(host, root, cancel));
    if (!there) return out;
    return run::HostCommandFailure("listing " + root, host, argv, r);
  }
  for (const std::string& rec : SplitNul(r.out)) {
    size_t t1 = rec.find('\t'), t2 = t1 == std::string::npos ? t1 : rec.find('\t', t1 + 1);
    if (t2 == std::string::npos) continue;
    RemoteFile f;
    f.mtime = std::strtod(rec.substr(0, t1).c_str(), nullptr);
    f.size = std::strtoull(rec.substr(t1 + 1, t2 - t1 - 1).c_str(), nullptr, 10);
    f.path = rec.substr(t2 + 1);
    out.push_back(std::move(f));
  }
  return out;
}

Result<json> FetchFreshDumps(run::Host& host, const std::string& dump_dir, double since, const fs::path& local_dir,
                             const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(auto files, ListRemoteFiles(host, dump_dir, 3, cancel));
  const fs::path root = fs::path(dump_dir).lexically_normal();
  std::set<std::string> fresh_dirs;  // step*/rank0 folders whose dump.json this run wrote
  for (const auto& f : files) {
    fs::path rel = fs::path(f.path).lexically_normal().lexically_relative(root);
    auto parts = std::vector<fs::path>(rel.begin(), rel.end());
    if (parts.size() != 3 || parts[2] != "dump.json" || parts[0].string().rfind("step", 0) != 0) continue;
    if ((parts[1] == "rank0" || parts[1] == "rank") && f.mtime >= since) fresh_dirs.insert((parts[0] / parts[1]).string());
  }
  if (fresh_dirs.empty()) {
    return FailedPrecondition("the run wrote no rank-0 msprobe dump.json (step*/rank0/dump.json) under " + dump_dir +
                              " on " + host.Describe() + " since it started");
  }
  json fetched = json::array();
  for (const auto& f : files) {
    fs::path rel = fs::path(f.path).lexically_normal().lexically_relative(root);
    std::string name = rel.filename().string();
    if (!fresh_dirs.count(rel.parent_path().string())) continue;
    if (name != "dump.json" && name != "stack.json" && name != "construct.json") continue;
    fs::path to = local_dir / rel;
    std::error_code ec;
    fs::create_directories(to.parent_path(), ec);
    run::TransferOptions o;
    o.cancel = cancel;
    PARITY_ASSIGN_OR_RETURN(uint64_t bytes, run::DownloadFile(host, f.path, to, o));
    fetched.push_back({{"remote", f.path}, {"local", to.string()}, {"bytes", bytes}});
  }
  return fetched;
}

Result<std::optional<RemoteFile>> NewestRemoteFile(run::Host& host, const std::string& path, double since,
                                                   int max_depth, const std::string& name_prefix,
                                                   const CancellationToken& cancel) {
  PARITY_ASSIGN_OR_RETURN(auto files, ListRemoteFiles(host, path, max_depth, cancel));
  std::optional<RemoteFile> newest;
  for (auto& f : files) {
    if (f.mtime < since) continue;
    if (!name_prefix.empty() && fs::path(f.path).filename().string().rfind(name_prefix, 0) != 0) continue;
    if (!newest || f.mtime > newest->mtime) newest = f;
  }
  return newest;
}

Status UploadInjected(run::Host& host, const fs::path& local_worktree, const std::string& remote_worktree,
                      const std::vector<std::string>& files, const std::string& helper, const CancellationToken& cancel) {
  std::vector<std::string> all = files;
  all.push_back(helper);
  for (const auto& rel : all) {
    if (cancel.cancelled()) return Cancelled("parity hunt was cancelled while uploading the probes");
    PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadFileLimited(local_worktree / rel, kMaxProbedFileBytes));
    Status up = run::UploadFile(host, bytes, remote_worktree + "/" + rel);
    if (!up.ok()) return std::move(up).Context("uploading the probes of " + rel + " into " + remote_worktree);
  }
  return Status::Ok();
}

Status VerifyRemoteRestore(const std::vector<std::pair<std::string, std::string>>& expected,
                           const std::string& output, bool helper_present, const std::string& where) {
  std::map<std::string, std::string> seen;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    bool escaped = !line.empty() && line[0] == '\\';  // sha256sum escapes names with \ or newline
    if (escaped) line.erase(0, 1);
    if (line.size() < 66 || line.compare(64, 2, "  ") != 0) continue;
    std::string name = line.substr(66);
    if (escaped) {
      std::string plain;
      for (size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '\\' && i + 1 < name.size()) {
          plain += name[i + 1] == 'n' ? '\n' : name[i + 1];
          ++i;
        } else {
          plain += name[i];
        }
      }
      name = plain;
    }
    seen[name] = line.substr(0, 64);
  }
  std::vector<std::string> bad;
  for (const auto& [path, sha] : expected) {
    auto it = seen.find(path);
    if (it == seen.end()) bad.push_back(path + " (no checksum: missing or unreadable)");
    else if (it->second != sha) bad.push_back(path + " (sha256 " + it->second.substr(0, 12) + ", expected " + sha.substr(0, 12) + ")");
  }
  if (helper_present) bad.push_back("the probe helper is still there");
  if (bad.empty()) return Status::Ok();
  std::string list;
  for (const auto& b : bad) list += (list.empty() ? "" : "; ") + b;
  return Internal(where + ": the revert of the probes could not be verified; these remote files may still hold "
                  "probes: " + list)
      .WithHint("restore them from the commit (`git checkout -- FILE` in that worktree) or remove the worktree");
}

Result<json> RestoreRemote(run::Host& host, const fs::path& local_worktree, const std::string& remote_worktree,
                           const std::vector<std::string>& files, const std::string& helper,
                           const CancellationToken& cancel) {
  const std::string where = remote_worktree + " on " + host.Describe();
  std::vector<std::pair<std::string, std::string>> expected;
  json listed = json::array();
  std::vector<std::string> argv = {"sha256sum", "--"};
  Status first_error = Status::Ok();
  // Every file is tried even when one fails: as few probes as possible are left behind.
  for (const auto& rel : files) {
    const std::string to = remote_worktree + "/" + rel;
    auto bytes = ReadFileLimited(local_worktree / rel, kMaxProbedFileBytes);
    if (!bytes.ok()) {
      if (first_error.ok()) first_error = std::move(bytes).take_status();
      expected.push_back({to, "(the local restored file is missing)"});
      continue;
    }
    Status up = run::UploadFile(host, *bytes, to);
    if (!up.ok() && first_error.ok()) first_error = std::move(up);
    std::string sha = inject::Sha256Hex(*bytes);
    expected.push_back({to, sha});
    listed.push_back({{"path", rel}, {"sha256", sha}});
    argv.push_back(to);
  }
  const std::string helper_path = remote_worktree + "/" + helper;
  Status removed = RunOk(host, {"rm", "-f", "--", helper_path}, cancel, "removing the probe helper from " + where);
  if (!removed.ok() && first_error.ok()) first_error = std::move(removed);
  const std::string stem = fs::path(helper).stem().string();
  // Its bytecode is inert once the helper is gone; removed all the same (absent is fine).
  (void)Run(host, {"find", remote_worktree + "/__pycache__", "-maxdepth", "1", "-name", stem + ".*", "-delete"}, cancel,
            "removing the helper's bytecode");
  std::string sums;
  if (files.size() > 0) {
    auto r = Run(host, argv, cancel, "sha256sum in " + where);
    if (r.ok()) sums = r->out;
    else if (first_error.ok()) first_error = std::move(r).take_status();
  }
  auto helper_there = Exists(host, helper_path, cancel);
  Status verified = VerifyRemoteRestore(expected, sums, !helper_there.ok() || *helper_there, where);
  if (!verified.ok()) {
    if (!first_error.ok()) verified.WithEvidence("cause", first_error.ToString());
    return verified;
  }
  return json{{"host", host.Describe()}, {"worktree", remote_worktree}, {"files", listed},
              {"verified", "sha256sum on the host of every restored file equals the local restored file's; the probe "
                           "helper is gone"}};
}

}  // namespace parity::workflow
