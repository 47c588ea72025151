#include "tools/run_training/remote_params.h"

namespace parity::tools {

using json = nlohmann::json;

Result<std::optional<run::SshTarget>> DecodeRemote(const json& arguments, JsonReader& reader) {
  std::optional<std::string> mode;
  reader.Optional("mode", mode);
  if (mode) reader.OneOf("mode", *mode, {"local", "remote"});
  bool has_ssh = arguments.contains("ssh") && !arguments["ssh"].is_null();
  if (has_ssh && arguments["ssh"].is_object() && arguments["ssh"].contains("password")) {
    return InvalidArgument("arguments.ssh.password: passwords are not accepted as arguments")
        .WithHint("export the password in an environment variable of the parity server and name it in "
                  "ssh.password_env (or use a key: ssh.identity_file, or ssh-agent)");
  }
  run::SshTarget target;
  std::optional<std::string> identity, password_env, known_hosts;
  reader.Object("ssh", false, [&](JsonReader& s) {
    s.Required("host", target.host).Optional("username", target.user).Optional("port", target.port);
    s.Optional("identity_file", identity).Optional("password_env", password_env).Optional("known_hosts", known_hosts);
    s.Optional("connect_timeout_s", target.connect_timeout_s);
    if (s.ok() && (target.port < 1 || target.port > 65535)) s.Fail(s.Child("port"), "must be between 1 and 65535");
  });
  if (!reader.ok()) return reader.Finish();
  bool remote = mode ? *mode == "remote" : has_ssh;
  if (!remote) return std::optional<run::SshTarget>();
  if (!has_ssh) {
    return InvalidArgument("arguments.ssh: required when mode is remote").WithHint("give {\"host\", \"username\", \"port\"}");
  }
  if (identity) target.identity_file = *identity;
  if (password_env) target.password_env = *password_env;
  if (known_hosts) target.known_hosts = *known_hosts;
  return std::optional<run::SshTarget>(target);
}

json RemoteSchemaProperties() {
  static const json props = json::parse(R"json({
    "mode": {"type": "string", "enum": ["local", "remote"],
      "description": "local (default) or remote over SSH; PrecisionComparer's config field. Default: remote when ssh is given."},
    "ssh": {"type": "object", "required": ["host"], "additionalProperties": false,
      "description": "The remote host. Its key must already be in known_hosts (an unknown or changed key is refused with its SHA256 fingerprint). Authentication: identity_file, else ssh-agent, else ~/.ssh/id_*, then the password in the environment variable password_env.",
      "properties": {
        "host": {"type": "string"},
        "username": {"type": "string", "description": "default: the local user"},
        "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 22},
        "identity_file": {"type": "string", "description": "private key file (unencrypted, or use ssh-agent)"},
        "password_env": {"type": "string", "description": "NAME of an environment variable of the parity server holding the password; never the password itself"},
        "known_hosts": {"type": "string", "description": "default ~/.ssh/known_hosts"},
        "connect_timeout_s": {"type": "integer", "minimum": 1, "default": 15}
      }}
  })json");
  return props;
}

}  // namespace parity::tools
