// The user's policy: what parity may read, write, run, contact and send. It is fixed by the
// user (the policy file in the user's config folder, the command-line flags of `parity
// serve` and the CLI verbs, the client's MCP roots) and never by a tool's arguments or a
// repository's files: nothing here reads either. Every check is in this module; the tools
// call it through tools/authorize.h, which turns "outside the policy" into a confirmation
// asked of the user (elicitation) or a refusal naming the policy line that would allow it.
//
// Checks answer a Decision:
//   kAllowed  a rule allows it (Decision.rule says which, for the record);
//   kAsk      no rule allows it: run/send/connect only after the user accepts the exact action;
//   kRefused  no confirmation can allow it (a path outside the folders, a secret bound by the
//             policy to another destination).
// Folders are compared after resolving symlinks (of the path's existing prefix), so a link
// inside an allowed folder that points outside is outside.
//
// Environment of children: PassesToChild(name) is the allow-list of parity's own
// variables a child inherits (InstallChildEnvironment makes RunProcess apply it to every
// child); secrets (names the policy binds to a destination, names that look like secrets)
// never pass unless the user lists the exact name in env.pass.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::policy {

enum class Access { kRead, kWrite };

struct Folder {
  std::filesystem::path path;  // absolute, symlinks resolved
  bool write = true;
  std::string source;          // "policy file ...", "--allow-folder", "working directory", "MCP root", ...
};

// An argv pattern: each word matches itself; "*" any one word; "..." as the last word any
// further words (also none); "{worktree_script}" a file inside the command's working folder
// given as a relative path (or absolute inside it), symlinks resolved.
struct CommandRule {
  std::vector<std::string> argv;
  std::string source;
};

struct SshHostRule {
  std::string host;
  int port = 22;             // 0: any port
  std::string user;          // empty: any user
  std::string password_env;  // the variable whose value may be sent to this host as the password
  std::string source;
};

struct MailRule {
  std::string host;
  int port = 0;                         // 0: any port
  std::vector<std::string> recipients;  // "me@corp.com" or "*@corp.com"
  std::string password_env;
  std::string source;
};

struct EndpointRule {
  std::string base_url;     // compared without a trailing '/'
  std::string api_key_env;  // the variable whose value may be sent there as the bearer key
  std::string source;
};

struct Decision {
  enum class Verdict { kAllowed, kAsk, kRefused };
  Verdict verdict = Verdict::kRefused;
  std::string rule;          // kAllowed: the rule that allowed it
  std::string reason;        // otherwise: why it is outside the policy
  nlohmann::json allow_with; // otherwise: the policy.json fragment that would allow it (null: none can)

  bool allowed() const { return verdict == Verdict::kAllowed; }
  static Decision Allow(std::string rule) { return {Verdict::kAllowed, std::move(rule), {}, nullptr}; }
};

// A command parity is about to run: exactly what the user is shown.
struct RunAction {
  std::string what;                         // "run_training: the training command"
  std::vector<std::string> argv;
  std::string cwd;                          // empty: parity's own
  std::map<std::string, std::string> env;   // variables set for it (beyond the inherited allow-list)
  std::string host = "local";               // "local" or user@host:port
  // argv[0] is an interpreter running a script parity ships (environment probe, ast
  // analysis, msprobe): the `interpreters` rule decides, not `commands`.
  bool parity_script = false;
};

// An SSH connection.
struct ConnectAction {
  std::string what;
  std::string host;
  int port = 22;
  std::string user;
  std::string password_env;  // empty: key or agent authentication only
};

// Data (and maybe a secret) sent over the network.
struct SendAction {
  enum class Kind { kMail, kLlm };
  Kind kind = Kind::kMail;
  std::string what;
  std::string url;                      // smtp[s]://host:port, https://api...
  std::string host;
  int port = 0;
  std::vector<std::string> recipients;  // mail
  std::string secret_env;               // the variable whose value goes along; empty: none
};

class Policy {
 public:
  // The built-in rules only (presets, interpreters, environment lists), no folder.
  Policy();

  // Checks. None of them touches the network; CheckPath and CheckRun read the file system
  // (resolving symlinks, recognising parity's worktrees).
  Decision CheckPath(const std::filesystem::path& path, Access access) const;
  Decision CheckRun(const RunAction& action) const;
  Decision CheckConnect(const ConnectAction& action) const;
  Decision CheckSend(const SendAction& action) const;
  // Whether parity's own environment variable `name` may pass to a child it starts.
  bool PassesToChild(std::string_view name) const;
  // Whether `name` holds a secret: bound by a rule to a destination, or named like one.
  bool IsSecret(std::string_view name) const;

  // Widening, only from the user's sources (the loader, the serve/CLI flags, MCP roots).
  void AddFolder(const std::filesystem::path& path, bool write, const std::string& source);
  void AddCommand(std::vector<std::string> argv, const std::string& source);
  void AddInterpreter(const std::string& program);
  void AddEnvPass(const std::string& pattern);
  void AddEnvSet(const std::string& pattern);
  void AddSshHost(SshHostRule rule) { ssh_hosts_.push_back(std::move(rule)); }
  void AddMail(MailRule rule) { mail_.push_back(std::move(rule)); }
  void AddEndpoint(EndpointRule rule) { endpoints_.push_back(std::move(rule)); }
  void NoteSource(std::string source) { sources_.push_back(std::move(source)); }

  const std::vector<Folder>& folders() const { return folders_; }
  // What `parity policy show` prints: every rule with where it came from.
  nlohmann::json ToJson() const;

 private:
  std::vector<Folder> folders_;
  std::vector<CommandRule> commands_;
  std::vector<std::string> interpreters_;
  std::vector<std::string> env_pass_, env_pass_exact_, env_set_;
  std::vector<SshHostRule> ssh_hosts_;
  std::vector<MailRule> mail_;
  std::vector<EndpointRule> endpoints_;
  std::vector<std::string> sources_;
};

// What a refusal is: kFailedPrecondition with the message "refused by the user's policy:
// <why>" (the prefix lets callers and tests tell it from other failures).
inline constexpr const char* kRefusedPrefix = "refused by the user's policy: ";
inline Status Refused(const std::string& why) { return FailedPrecondition(kRefusedPrefix + why); }

// ${XDG_CONFIG_HOME:-$HOME/.config}/parity/policy.json
std::filesystem::path DefaultPolicyFile();

struct LoadOptions {
  std::optional<std::filesystem::path> file;       // --policy FILE (must exist); else DefaultPolicyFile() if present
  std::filesystem::path working_directory;          // allowed (read and write): where the user started parity
  std::vector<std::filesystem::path> report_dirs;   // allowed (read and write)
  std::vector<std::filesystem::path> extra_folders; // --allow-folder
};

// The built-in rules, the file's rules and the flags' folders. A file that is not valid
// JSON, has an unknown key, or is writable by others than its owner is an error (parity
// does not start on a policy it cannot trust).
Result<Policy> Load(const LoadOptions& options);
// Parses a policy document (the file's JSON) into `policy`; `source` names it in rules.
Status ApplyDocument(const nlohmann::json& document, const std::string& source, Policy& policy);

// Makes every child process parity starts (support/subprocess.h) inherit only the
// variables the policy passes. Called once at start by `parity serve` and the CLI verbs.
void InstallChildEnvironment(const Policy& policy);

// The text shown to the user for an action: the exact argv (shell-quoted), working folder,
// host, environment, destination and secret.
std::string Describe(const RunAction& action);
std::string Describe(const ConnectAction& action);
std::string Describe(const SendAction& action);

// Whether a shell-style pattern (NAME, or PREFIX* / *SUFFIX / *INFIX*) matches `name`.
bool NameMatches(std::string_view pattern, std::string_view name);

}  // namespace parity::policy
