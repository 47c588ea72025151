// A side of `parity hunt` that runs on an SSH host (config mode "remote"). Its code is
// analysed locally in a worktree of the shadow repository (hunt_shadow.h); its runs happen in
// a worktree parity makes on the host, beside the user's tree, holding the same bytes. What
// the runs write there (msprobe dumps, the config's log, TensorBoard events) is brought back
// into the report directory, streamed; the probes injected locally are uploaded, and their
// revert is uploaded too and then checked on the host by SHA-256.
//
// Every command is an argv run through run::Host (paths are argv words, never shell text);
// the SSH password goes to libssh only through an environment variable of this process.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "domain/workflow/comparer_config.h"
#include "domain/workflow/hunt_repo.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::workflow {

// The side's ssh block as a target. A literal password is put into this process's
// environment as PARITY_HUNT_SSH_PASSWORD_<KEY> and only that name is passed on
// (password_env, when the config names one, wins).
Result<run::SshTarget> HuntSshTarget(const ComparerConfig& config, const ComparerSide& side, const std::string& key);

// run_training's {"mode": "remote", "ssh": {...}} for the target (never a password).
nlohmann::json RunTrainingRemoteArgs(const run::SshTarget& target);

// Connects, naming the side in the error; an unknown host key's hint also says how to name
// another known_hosts file in the config.
Result<std::unique_ptr<run::Host>> ConnectSide(const run::SshTarget& target, const std::string& where);

// Makes `path` a detached worktree of the side's commit in its repository on the host, with
// the same bytes as `local_worktree` (its tracked changes applied with `git apply --binary`,
// its untracked files uploaded). A path already there is refused unless parity made it (its
// marker in the worktree's git dir) and the user confirmed its removal (`remove_stale`:
// --yes), in which case it is removed first.
Status CreateRemoteWorktree(run::Host& host, const SideSource& source, const std::string& path,
                            const std::filesystem::path& local_worktree, bool remove_stale,
                            const CancellationToken& cancel);

// `git worktree remove --force` + `git worktree prune`, only for a worktree parity made.
Status RemoveRemoteWorktree(run::Host& host, const std::string& top, const std::string& path,
                            const CancellationToken& cancel);

// Seconds since the epoch on the host's clock (file times there are compared with it).
Result<double> RemoteClock(run::Host& host);

struct RemoteFile {
  std::string path;
  double mtime = 0;
  uint64_t size = 0;
};

// Regular files under `root` (or `root` itself when it is a file), at most `max_depth` deep;
// empty when root does not exist.
Result<std::vector<RemoteFile>> ListRemoteFiles(run::Host& host, const std::string& root, int max_depth,
                                                const CancellationToken& cancel);

// The msprobe files of rank 0 (`step*/rank0/` or `step*/rank/`: dump.json, stack.json,
// construct.json) that a run wrote under `dump_dir` since `since`, copied into `local_dir`
// with the same layout. An error when the run wrote no dump.json there.
Result<nlohmann::json> FetchFreshDumps(run::Host& host, const std::string& dump_dir, double since,
                                       const std::filesystem::path& local_dir, const CancellationToken& cancel);

// The newest file under `path` (a file or a folder) written since `since`, or nullopt.
Result<std::optional<RemoteFile>> NewestRemoteFile(run::Host& host, const std::string& path, double since,
                                                   int max_depth, const std::string& name_prefix,
                                                   const CancellationToken& cancel);

// Uploads the injected files (relative paths) and the probe helper from the local worktree.
Status UploadInjected(run::Host& host, const std::filesystem::path& local_worktree, const std::string& remote_worktree,
                      const std::vector<std::string>& files, const std::string& helper, const CancellationToken& cancel);

// Uploads the restored files, removes the helper (and its bytecode) on the host, then checks
// every remote file's SHA-256 against the local restored file's and that the helper is gone.
// The result: {host, worktree, files: [{path, sha256}], verified}.
Result<nlohmann::json> RestoreRemote(run::Host& host, const std::filesystem::path& local_worktree,
                                     const std::string& remote_worktree, const std::vector<std::string>& files,
                                     const std::string& helper, const CancellationToken& cancel);

// The check RestoreRemote makes: `sha256sum` output for `expected` (path -> SHA-256, in the
// order given to sha256sum) and whether the helper is still there. The error lists the
// files that may still hold probes.
Status VerifyRemoteRestore(const std::vector<std::pair<std::string, std::string>>& expected,
                           const std::string& sha256sum_output, bool helper_present, const std::string& where);

}  // namespace parity::workflow
