// The checks of support/policy.h. Loading the file, printing and describing are in
// policy_file.cpp.
#include "support/policy.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "support/child_environment.h"
#include "support/subprocess.h"

namespace parity::policy {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kBuiltIn = "built-in";

// Parity's own variables a child inherits: the system's, the toolchains' (CANN, CUDA,
// Python, conda), and distributed-training variables. Secrets are removed afterwards.
const char* const kDefaultPass[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR", "PWD",
    "HOSTNAME", "XDG_*", "PYTHONPATH", "PYTHONHOME", "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING", "VIRTUAL_ENV", "CONDA_*", "LD_LIBRARY_PATH", "ASCEND_*", "HCCL_*", "NPU_*", "ACL_*",
    "TOOLCHAIN_HOME", "CUDA_*", "NCCL_*", "CUBLAS_*", "CUDNN_*", "NVIDIA_*", "TORCH_*", "PYTORCH_*", "TRITON_*",
    "OMP_*", "MKL_*", "KMP_*", "OPENBLAS_*", "HF_*", "TRANSFORMERS_*", "TOKENIZERS_PARALLELISM", "MASTER_ADDR",
    "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NNODES", "NODE_RANK", "NGPU", "LOG_RANK", "GIT_*",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "SOURCE_DATE_EPOCH", "SLURM_CONF", "PARITY_*"};

// Variables a tool's `env` argument may set without asking: knobs of determinism and
// placement. Nothing that loads code (LD_PRELOAD, BASH_ENV, PYTHONPATH, PYTHONSTARTUP,
// NCCL_NET_PLUGIN, ASCEND_CUSTOM_OPP_PATH) is here.
const char* const kDefaultSet[] = {
    "HCCL_DETERMINISTIC", "HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT", "HCCL_BUFFSIZE", "NCCL_ALGO", "NCCL_PROTO",
    "NCCL_DEBUG", "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "CUBLAS_WORKSPACE_CONFIG", "CUDA_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING", "ASCEND_RT_VISIBLE_DEVICES", "ASCEND_LAUNCH_BLOCKING", "ASCEND_GLOBAL_LOG_LEVEL",
    "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF",
    "NPU_ASD_ENABLE", "MASTER_ADDR", "MASTER_PORT", "NGPU", "NNODES", "LOG_RANK", "TOKENIZERS_PARALLELISM"};

// Names that hold secrets whatever the policy says about them.
const char* const kSecretPatterns[] = {"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_PASS", "*API_KEY*",
                                       "*APIKEY*", "*CREDENTIAL*", "*PRIVATE_KEY*", "*ACCESS_KEY*"};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// `path` with symlinks of its existing prefix resolved; absolute.
fs::path Resolve(const fs::path& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  if (ec) return path.lexically_normal();
  fs::path resolved = fs::weakly_canonical(abs, ec);
  return ec ? abs.lexically_normal() : resolved;
}

bool Inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin(), r = root.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

std::string ReadSmall(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::string text(4096, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text;
}

// The main repository of the parity worktree holding `path`, when it is one: the nearest
// folder with a `.git` file naming an admin folder <repo>/.git/worktrees/<name> that
// holds parity's mark (parity.json, created_by parity) and whose `gitdir` names that very
// `.git` file back. git writes the admin folder; a cloned repository cannot ship it.
std::optional<fs::path> ParityWorktreeRepo(const fs::path& resolved) {
  for (fs::path dir = resolved; !dir.empty(); dir = dir.parent_path()) {
    std::error_code ec;
    fs::path dotgit = dir / ".git";
    if (fs::is_regular_file(dotgit, ec)) {
      std::string text = ReadSmall(dotgit);
      if (text.rfind("gitdir: ", 0) != 0) return std::nullopt;
      fs::path admin = fs::path(text.substr(8));
      if (admin.is_relative()) admin = dir / admin;
      admin = Resolve(admin);
      json mark = json::parse(ReadSmall(admin / "parity.json"), nullptr, false);
      if (!mark.is_object() || mark.value("created_by", "") != "parity") return std::nullopt;
      if (Resolve(ReadSmall(admin / "gitdir")) != Resolve(dotgit)) return std::nullopt;
      if (admin.parent_path().filename() != "worktrees" || admin.parent_path().parent_path().filename() != ".git") {
        return std::nullopt;
      }
      return admin.parent_path().parent_path().parent_path();
    }
    if (fs::is_directory(dotgit, ec)) return std::nullopt;  // a main repository, not a worktree
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

json FolderLine(const fs::path& path, Access access) {
  return {{"folders", json::array({{{"path", path.string()}, {"write", access == Access::kWrite}}})}};
}

// Matches one argv against a rule's words.
bool ArgvMatches(const std::vector<std::string>& rule, const std::vector<std::string>& argv, const std::string& cwd,
                 bool remote) {
  size_t i = 0;
  for (size_t w = 0; w < rule.size(); ++w) {
    const std::string& word = rule[w];
    if (word == "..." && w + 1 == rule.size()) return true;
    if (i >= argv.size()) return false;
    const std::string& a = argv[i++];
    if (word == "*") continue;
    if (word == "{worktree_script}") {
      if (cwd.empty() || a.empty()) return false;
      fs::path p(a);
      if (remote) {  // nothing to resolve here: a relative path that cannot climb out
        if (p.is_absolute()) return false;
        for (const auto& part : p) if (part == "..") return false;
        continue;
      }
      fs::path root = Resolve(cwd);
      fs::path file = Resolve(p.is_absolute() ? p : fs::path(cwd) / p);
      std::error_code ec;
      if (!Inside(file, root) || !fs::is_regular_file(file, ec)) return false;
      continue;
    }
    if (word != a) return false;
  }
  return i == argv.size();
}

bool RecipientMatches(const std::string& pattern, const std::string& address) {
  if (pattern.rfind("*@", 0) == 0) {
    size_t at = address.rfind('@');
    return at != std::string::npos && Upper(address.substr(at)) == Upper(pattern.substr(1));
  }
  return Upper(pattern) == Upper(address);
}

std::string TrimSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// Which destination a secret variable belongs to, when a rule binds it.
std::vector<std::string> Bindings(const std::vector<SshHostRule>& ssh, const std::vector<MailRule>& mail,
                                  const std::vector<EndpointRule>& endpoints, std::string_view name) {
  std::vector<std::string> out;
  for (const auto& r : ssh) if (r.password_env == name) out.push_back("ssh host " + r.host);
  for (const auto& r : mail) if (r.password_env == name) out.push_back("mail server " + r.host);
  for (const auto& r : endpoints) if (r.api_key_env == name) out.push_back("LLM endpoint " + r.base_url);
  return out;
}

Decision Ask(std::string reason, json allow_with) {
  return {Decision::Verdict::kAsk, "", std::move(reason), std::move(allow_with)};
}
Decision Refuse(std::string reason, json allow_with = nullptr) {
  return {Decision::Verdict::kRefused, "", std::move(reason), std::move(allow_with)};
}

// A secret sent where no rule binds it: refused when the policy binds it elsewhere (no
// confirmation may redirect it), otherwise asked.
std::optional<Decision> SecretElsewhere(const std::vector<std::string>& bound, const std::string& name,
                                        const std::string& destination) {
  if (bound.empty()) return std::nullopt;
  std::string where;
  for (const auto& b : bound) where += (where.empty() ? "" : ", ") + b;
  return Refuse("the value of $" + name + " belongs to " + where + " in the user's policy; it is never sent to " +
                destination);
}

}  // namespace

bool NameMatches(std::string_view pattern, std::string_view name) {
  bool star_front = !pattern.empty() && pattern.front() == '*';
  bool star_back = pattern.size() > 1 && pattern.back() == '*';
  std::string_view core = pattern.substr(star_front ? 1 : 0);
  if (star_back) core.remove_suffix(1);
  if (star_front && star_back) return name.find(core) != std::string_view::npos;
  if (star_front) return name.size() >= core.size() && name.substr(name.size() - core.size()) == core;
  if (star_back) return name.substr(0, core.size()) == core;
  return name == pattern;
}

Policy::Policy() {
  for (const char* p : kDefaultPass) env_pass_.push_back(p);
  for (const char* p : kDefaultSet) env_set_.push_back(p);
  // The presets: a launcher script of the repository run by bash (torchtitan's
  // scripts/run_train.sh, a Megatron pretrain script), with any arguments.
  commands_.push_back({{"bash", "{worktree_script}", "..."}, kBuiltIn});
  // The interpreters parity's own scripts run with by default (probe, ast analysis).
  interpreters_ = {"/usr/bin/python3", "python3", "msprobe"};
}

void Policy::AddFolder(const fs::path& path, bool write, const std::string& source) {
  folders_.push_back({Resolve(path), write, source});
}
void Policy::AddCommand(std::vector<std::string> argv, const std::string& source) {
  commands_.push_back({std::move(argv), source});
}
void Policy::AddInterpreter(const std::string& program) { interpreters_.push_back(program); }
void Policy::AddEnvPass(const std::string& pattern) {
  (pattern.find('*') == std::string::npos ? env_pass_exact_ : env_pass_).push_back(pattern);
}
void Policy::AddEnvSet(const std::string& pattern) { env_set_.push_back(pattern); }

Decision Policy::CheckPath(const fs::path& path, Access access) const {
  fs::path resolved = Resolve(path);
  auto direct = [&](const fs::path& p) -> const Folder* {
    for (const auto& f : folders_) {
      if ((f.write || access == Access::kRead) && Inside(p, f.path)) return &f;
    }
    return nullptr;
  };
  if (const Folder* f = direct(resolved)) return Decision::Allow(f->source + ": " + f->path.string());
  if (auto repo = ParityWorktreeRepo(resolved)) {
    if (const Folder* f = direct(Resolve(*repo))) {
      return Decision::Allow("a parity worktree of " + repo->string() + " (" + f->source + ")");
    }
  }
  std::string verb = access == Access::kWrite ? "written" : "read";
  std::string shown = resolved == fs::absolute(path).lexically_normal() ? resolved.string()
                      : fs::absolute(path).lexically_normal().string() + " (resolves to " + resolved.string() + ")";
  return Refuse(shown + " lies outside the folders the user's policy lets parity " +
                    (access == Access::kWrite ? "write" : "read") + "; it is not " + verb,
                FolderLine(resolved, access));
}

Decision Policy::CheckRun(const RunAction& a) const {
  const bool remote = a.host != "local";
  std::vector<std::string> reasons;
  json allow = json::object();
  if (a.argv.empty()) return Refuse("an empty command");
  if (!remote && !a.cwd.empty()) {
    Decision d = CheckPath(a.cwd, Access::kWrite);
    if (!d.allowed()) return d;  // a folder is never confirmed: the policy names it
  }
  std::string rule;
  if (a.parity_script) {
    for (const auto& i : interpreters_) if (i == a.argv[0]) rule = "interpreter " + i;
    if (rule.empty()) {
      reasons.push_back("the interpreter " + a.argv[0] + " is not one the user's policy lists");
      allow["interpreters"] = json::array({a.argv[0]});
    }
  } else {
    for (const auto& c : commands_) {
      if (ArgvMatches(c.argv, a.argv, a.cwd, remote)) { rule = "command " + json(c.argv).dump() + " (" + c.source + ")"; break; }
    }
    if (rule.empty()) {
      reasons.push_back("the command is not a preset and no rule of the user's policy allows it");
      allow["commands"] = json::array({{{"argv", a.argv}}});
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : a.env) {
    bool ok = false;
    for (const auto& p : env_set_) ok = ok || NameMatches(p, name);
    if (!ok) names.push_back(name);
  }
  if (!names.empty()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    reasons.push_back("the environment variable(s) " + list + " are not in the policy's env.set list");
    allow["env"] = {{"set", names}};
  }
  if (reasons.empty()) return Decision::Allow(rule);
  std::string reason;
  for (const auto& r : reasons) reason += (reason.empty() ? "" : "; ") + r;
  return Ask(reason, allow);
}

Decision Policy::CheckConnect(const ConnectAction& a) const {
  std::string destination = "ssh://" + (a.user.empty() ? "" : a.user + "@") + a.host + ":" + std::to_string(a.port);
  for (const auto& r : ssh_hosts_) {
    if (r.host != a.host || (r.port != 0 && r.port != a.port) || (!r.user.empty() && r.user != a.user)) continue;
    if (a.password_env.empty() || a.password_env == r.password_env) return Decision::Allow("ssh host " + r.host + " (" + r.source + ")");
  }
  if (!a.password_env.empty()) {
    if (auto d = SecretElsewhere(Bindings(ssh_hosts_, mail_, endpoints_, a.password_env), a.password_env, destination)) {
      return *d;
    }
  }
  json rule = {{"host", a.host}, {"port", a.port}};
  if (!a.user.empty()) rule["user"] = a.user;
  if (!a.password_env.empty()) rule["password_env"] = a.password_env;
  return Ask(destination + " is not an SSH host of the user's policy", {{"ssh_hosts", json::array({rule})}});
}

Decision Policy::CheckSend(const SendAction& a) const {
  if (a.kind == SendAction::Kind::kMail) {
    for (const auto& r : mail_) {
      if (Upper(r.host) != Upper(a.host) || (r.port != 0 && r.port != a.port)) continue;
      if (!a.secret_env.empty() && a.secret_env != r.password_env) continue;
      bool all = !a.recipients.empty();
      for (const auto& to : a.recipients) {
        bool one = false;
        for (const auto& p : r.recipients) one = one || RecipientMatches(p, to);
        all = all && one;
      }
      if (all) return Decision::Allow("mail server " + r.host + " (" + r.source + ")");
    }
  } else {
    for (const auto& r : endpoints_) {
      if (TrimSlash(r.base_url) == TrimSlash(a.url) && r.api_key_env == a.secret_env) {
        return Decision::Allow("LLM endpoint " + r.base_url + " (" + r.source + ")");
      }
    }
  }
  if (!a.secret_env.empty()) {
    std::vector<std::string> elsewhere;
    for (const auto& r : ssh_hosts_) if (r.password_env == a.secret_env) elsewhere.push_back("ssh host " + r.host);
    for (const auto& r : mail_) {
      if (r.password_env == a.secret_env && (a.kind != SendAction::Kind::kMail || Upper(r.host) != Upper(a.host))) {
        elsewhere.push_back("mail server " + r.host);
      }
    }
    for (const auto& r : endpoints_) {
      if (r.api_key_env == a.secret_env && (a.kind != SendAction::Kind::kLlm || TrimSlash(r.base_url) != TrimSlash(a.url))) {
        elsewhere.push_back("LLM endpoint " + r.base_url);
      }
    }
    if (auto d = SecretElsewhere(elsewhere, a.secret_env, a.url)) return *d;
  }
  if (a.kind == SendAction::Kind::kMail) {
    json rule = {{"host", a.host}, {"port", a.port}, {"recipients", a.recipients}};
    if (!a.secret_env.empty()) rule["password_env"] = a.secret_env;
    return Ask("mail to " + a.url + " for these recipients is not allowed by the user's policy",
               {{"mail", json::array({rule})}});
  }
  return Ask(a.url + " is not an LLM endpoint of the user's policy with the key $" + a.secret_env,
             {{"llm_endpoints", json::array({{{"base_url", TrimSlash(a.url)}, {"api_key_env", a.secret_env}}})}});
}

bool Policy::IsSecret(std::string_view name) const {
  if (!Bindings(ssh_hosts_, mail_, endpoints_, name).empty()) return true;
  std::string upper = Upper(name);
  for (const char* p : kSecretPatterns) if (NameMatches(p, upper)) return true;
  return false;
}

bool Policy::PassesToChild(std::string_view name) const {
  for (const auto& e : env_pass_exact_) if (e == name) return true;  // the user named it: even a secret
  if (IsSecret(name)) return false;
  for (const auto& p : env_pass_) if (NameMatches(p, name)) return true;
  return false;
}

namespace {
const Policy* g_child_policy = nullptr;  // set once at start, never freed (children start until exit)
bool ChildFilter(std::string_view name) { return g_child_policy->PassesToChild(name); }
}  // namespace

void InstallChildEnvironment(const Policy& policy) {
  g_child_policy = new Policy(policy);
  SetChildEnvironmentFilter(&ChildFilter);
}

}  // namespace parity::policy
