// Loading the user's policy file, printing the policy, and describing actions for the
// confirmation the user is shown (support/policy.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/json_reader.h"
#include "support/policy.h"
#include "support/subprocess.h"

namespace parity::policy {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path ExpandHome(const std::string& path) {
  if (path == "~" || path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home && *home) return fs::path(home) / path.substr(path.size() > 1 ? 2 : 1);
  }
  return fs::path(path);
}

// Each element of the array `key` of `doc` decoded by `one(JsonReader&, path)`.
template <typename F>
Status EachObject(const json& doc, const std::string& key, const std::string& source, F&& one) {
  if (!doc.contains(key)) return Status::Ok();
  const json& items = doc[key];
  std::string path = source + "." + key;
  if (!items.is_array()) return InvalidArgument(path + ": expected array, got " + JsonTypeName(items));
  for (size_t i = 0; i < items.size(); ++i) {
    std::string at = path + "[" + std::to_string(i) + "]";
    if (!items[i].is_object()) return InvalidArgument(at + ": expected object, got " + JsonTypeName(items[i]));
    JsonReader r(items[i], at);
    one(r, at);
    PARITY_RETURN_IF_ERROR(r.Finish());
  }
  return Status::Ok();
}

// A policy file others can change is no policy: refuse it, as ssh does its config.
Status CheckFileOwnership(const fs::path& file) {
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) return NotFound("cannot read the policy file " + file.string());
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPrecondition("the policy file " + file.string() + " is writable by other users; parity does not "
                              "trust it")
        .WithHint("chmod go-w " + file.string());
  }
  if (st.st_uid != ::getuid()) {
    return FailedPrecondition("the policy file " + file.string() + " is not owned by the user running parity")
        .WithHint("it must be your own file: chown it or write your own");
  }
  return Status::Ok();
}

std::string Quote(const std::string& word) { return ShellQuote({word}); }

}  // namespace

fs::path DefaultPolicyFile() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  if (xdg && *xdg) return fs::path(xdg) / "parity" / "policy.json";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : ".") / ".config" / "parity" / "policy.json";
}

Status ApplyDocument(const json& doc, const std::string& source, Policy& policy) {
  PARITY_RETURN_IF_ERROR(ExpectObject(doc, source));
  {
    JsonReader top(doc, source);
    for (const char* k : {"folders", "commands", "interpreters", "env", "ssh_hosts", "mail", "llm_endpoints", "$comment"}) {
      top.Allow(k);
    }
    PARITY_RETURN_IF_ERROR(top.Finish());
  }
  PARITY_RETURN_IF_ERROR(EachObject(doc, "folders", source, [&](JsonReader& r, const std::string& at) {
    std::string path;
    bool write = true;
    r.Required("path", path).Optional("write", write);
    if (r.ok() && path.empty()) r.Fail(r.Child("path"), "empty");
    if (r.ok()) {
      fs::path p = ExpandHome(path);
      if (p.is_relative()) r.Fail(r.Child("path"), "must be absolute (or start with ~/)");
      else policy.AddFolder(p, write, at);
    }
  }));
  PARITY_RETURN_IF_ERROR(EachObject(doc, "commands", source, [&](JsonReader& r, const std::string& at) {
    std::vector<std::string> argv;
    r.Required("argv", argv);
    if (r.ok() && argv.empty()) r.Fail(r.Child("argv"), "empty");
    if (r.ok()) policy.AddCommand(argv, at);
  }));
  if (doc.contains("interpreters")) {
    std::vector<std::string> list;
    const json wrapped = {{"interpreters", doc["interpreters"]}};  // the reader keeps a pointer
    JsonReader r(wrapped, source);
    r.Required("interpreters", list);
    PARITY_RETURN_IF_ERROR(r.Finish());
    for (const auto& i : list) policy.AddInterpreter(i);
  }
  if (doc.contains("env")) {
    std::vector<std::string> pass, set;
    const json wrapped = {{"env", doc["env"]}};
    JsonReader r(wrapped, source);
    r.Object("env", true, [&](JsonReader& e) { e.Optional("pass", pass).Optional("set", set); });
    PARITY_RETURN_IF_ERROR(r.Finish());
    for (const auto& p : pass) policy.AddEnvPass(p);
    for (const auto& p : set) policy.AddEnvSet(p);
  }
  PARITY_RETURN_IF_ERROR(EachObject(doc, "ssh_hosts", source, [&](JsonReader& r, const std::string& at) {
    SshHostRule rule;
    r.Required("host", rule.host).Optional("port", rule.port).Optional("user", rule.user);
    r.Optional("password_env", rule.password_env);
    rule.source = at;
    if (r.ok()) policy.AddSshHost(rule);
  }));
  PARITY_RETURN_IF_ERROR(EachObject(doc, "mail", source, [&](JsonReader& r, const std::string& at) {
    MailRule rule;
    r.Required("host", rule.host).Optional("port", rule.port).Required("recipients", rule.recipients);
    r.Optional("password_env", rule.password_env);
    rule.source = at;
    if (r.ok()) policy.AddMail(rule);
  }));
  PARITY_RETURN_IF_ERROR(EachObject(doc, "llm_endpoints", source, [&](JsonReader& r, const std::string& at) {
    EndpointRule rule;
    r.Required("base_url", rule.base_url).Required("api_key_env", rule.api_key_env);
    rule.source = at;
    if (r.ok()) policy.AddEndpoint(rule);
  }));
  return Status::Ok();
}

Result<Policy> Load(const LoadOptions& o) {
  Policy policy;
  // DeepSeek's public API with its documented key variable, and the user's own
  // DEEPSEEK_BASE_URL (the user's environment is the user's, not the caller's).
  policy.AddEndpoint({"https://api.deepseek.com", "DEEPSEEK_API_KEY", "built-in"});
  if (const char* base = std::getenv("DEEPSEEK_BASE_URL"); base && *base) {
    policy.AddEndpoint({base, "DEEPSEEK_API_KEY", "environment DEEPSEEK_BASE_URL"});
  }
  if (!o.working_directory.empty()) policy.AddFolder(o.working_directory, true, "working directory");
  for (const auto& d : o.report_dirs) policy.AddFolder(fs::absolute(d), true, "report directory");
  for (const auto& d : o.extra_folders) policy.AddFolder(fs::absolute(d), true, "--allow-folder");
  fs::path file = o.file ? *o.file : DefaultPolicyFile();
  std::error_code ec;
  if (!o.file && !fs::exists(file, ec)) {
    policy.NoteSource("no policy file at " + file.string() + " (built-in rules only)");
    return policy;
  }
  PARITY_RETURN_IF_ERROR(CheckFileOwnership(file));
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument("the policy file " + file.string() + " is not valid JSON");
  PARITY_RETURN_IF_ERROR(ApplyDocument(doc, file.string(), policy));
  policy.NoteSource(file.string());
  return policy;
}

json Policy::ToJson() const {
  json folders = json::array(), commands = json::array(), ssh = json::array(), mail = json::array(),
       endpoints = json::array();
  for (const auto& f : folders_) folders.push_back({{"path", f.path.string()}, {"write", f.write}, {"source", f.source}});
  folders.push_back({{"path", "(parity's worktrees of the repositories above)"}, {"write", true}, {"source", "built-in"}});
  for (const auto& c : commands_) commands.push_back({{"argv", c.argv}, {"source", c.source}});
  for (const auto& r : ssh_hosts_) {
    ssh.push_back({{"host", r.host}, {"port", r.port}, {"user", r.user}, {"password_env", r.password_env}, {"source", r.source}});
  }
  for (const auto& r : mail_) {
    mail.push_back({{"host", r.host}, {"port", r.port}, {"recipients", r.recipients}, {"password_env", r.password_env},
                    {"source", r.source}});
  }
  for (const auto& r : endpoints_) {
    endpoints.push_back({{"base_url", r.base_url}, {"api_key_env", r.api_key_env}, {"source", r.source}});
  }
  json pass = env_pass_exact_;
  for (const auto& p : env_pass_) pass.push_back(p);
  return {{"sources", sources_},
          {"folders", folders},
          {"commands", commands},
          {"interpreters", interpreters_},
          {"env", {{"pass", pass}, {"set", env_set_}, {"never_passed", "secrets: variables bound to a destination "
                                                                       "below, and names like *TOKEN*, *SECRET*, "
                                                                       "*PASSWORD*, *API_KEY*, unless listed by exact "
                                                                       "name in env.pass"}}},
          {"ssh_hosts", ssh},
          {"mail", mail},
          {"llm_endpoints", endpoints}};
}

std::string Describe(const RunAction& a) {
  std::string s = a.what + "\n  command: " + ShellQuote(a.argv) + "\n  in folder: " + (a.cwd.empty() ? "(parity's)" : a.cwd) +
                  "\n  on host: " + a.host;
  if (!a.env.empty()) {
    s += "\n  environment set:";
    for (const auto& [k, v] : a.env) s += " " + k + "=" + Quote(v);
  }
  return s;
}

std::string Describe(const ConnectAction& a) {
  std::string s = a.what + "\n  connect over SSH to: " + (a.user.empty() ? "" : a.user + "@") + a.host + ":" +
                  std::to_string(a.port);
  if (!a.password_env.empty()) s += "\n  sending as the password: the value of $" + a.password_env;
  return s;
}

std::string Describe(const SendAction& a) {
  std::string s = a.what + "\n  send to: " + a.url;
  if (!a.recipients.empty()) {
    s += "\n  recipients:";
    for (const auto& r : a.recipients) s += " " + r;
  }
  if (!a.secret_env.empty()) s += "\n  with the secret: the value of $" + a.secret_env;
  return s;
}

}  // namespace parity::policy
