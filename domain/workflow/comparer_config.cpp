#include "domain/workflow/comparer_config.h"
#include "support/json_document.h"

#include <fstream>
#include <sstream>

#include "support/json_reader.h"

namespace parity::workflow {

namespace {

void DecodeSide(JsonReader& r, ComparerSide& side) {
  r.Optional("mode", side.mode).OneOf("mode", side.mode, {"local", "remote"});
  r.Optional("log_path", side.log_path).Optional("code_path", side.code_path).Required("run_script", side.run_script);
  r.Optional("ref", side.ref).Optional("metrics_file", side.metrics_file);
  r.Optional("executor", side.executor).OneOf("executor", side.executor, {"default", "slurm"});
  if (r.Has("ssh")) {
    r.Object("ssh", false, [&](JsonReader& s) {
      ComparerSsh ssh;
      s.Optional("host", ssh.host).Optional("username", ssh.username).Optional("port", ssh.port);
      s.Optional("password", ssh.password);
      s.Optional("identity_file", ssh.identity_file).Optional("known_hosts", ssh.known_hosts);
      s.Optional("password_env", ssh.password_env);
      if (s.ok() && (ssh.port < 1 || ssh.port > 65535)) s.Fail(s.Child("port"), "must be between 1 and 65535");
      side.ssh = ssh;
    });
  }
  if (r.ok() && side.ref && side.ref->empty()) r.Fail(r.Child("ref"), "must not be empty (omit it for code_path's HEAD)");
  if (r.ok() && side.mode == "remote" && (!side.ssh || side.ssh->host.empty())) {
    r.Fail(r.Child("ssh.host"), "required when mode is remote");
  }
  if (r.ok() && side.mode == "remote" && !side.code_path.empty() && side.code_path[0] != '/') {
    r.Fail(r.Child("code_path"), "must be an absolute path on the SSH host when mode is remote");
  }
}

nlohmann::json SideJson(const ComparerSide& s) {
  nlohmann::json j = {{"mode", s.mode}, {"log_path", s.log_path}, {"code_path", s.code_path}, {"run_script", s.run_script}};
  if (s.ref) j["ref"] = *s.ref;
  if (!s.metrics_file.empty()) j["metrics_file"] = s.metrics_file;
  if (s.executor != "default") j["executor"] = s.executor;
  if (s.ssh) {
    j["ssh"] = {{"host", s.ssh->host}, {"username", s.ssh->username}, {"port", s.ssh->port}};
    if (s.ssh->password) j["ssh"]["password"] = "***";
    if (s.ssh->identity_file) j["ssh"]["identity_file"] = *s.ssh->identity_file;
    if (s.ssh->known_hosts) j["ssh"]["known_hosts"] = *s.ssh->known_hosts;
    if (s.ssh->password_env) j["ssh"]["password_env"] = *s.ssh->password_env;
  }
  return j;
}

}  // namespace

Result<ComparerConfig> ParseComparerConfig(const nlohmann::json& value, const std::string& name) {
  PARITY_RETURN_IF_ERROR(ExpectObject(value, name));
  ComparerConfig c;
  c.name = name;
  JsonReader r(value, name);
  r.Object("baseline", true, [&](JsonReader& s) { DecodeSide(s, c.baseline); });
  r.Object("test", true, [&](JsonReader& s) { DecodeSide(s, c.test); });
  r.Object("msprobe", false, [&](JsonReader& m) {
    m.Optional("baseline_data_dir", c.baseline_data_dir).Optional("test_data_dir", c.test_data_dir);
    m.Optional("parse_code_dir", c.parse_code_dir).Optional("compare_output_dir", c.compare_output_dir);
  });
  r.Object("debug", false, [&](JsonReader& d) {
    d.Optional("max_iterations", c.max_iterations).Optional("tolerance", c.tolerance);
    d.Optional("log_keywords", c.log_keywords).Optional("trace_threshold", c.trace_threshold);
  });
  PARITY_RETURN_IF_ERROR(r.Finish());
  if (c.max_iterations < 1) return InvalidArgument(name + ".debug.max_iterations: must be at least 1");
  if (!(c.tolerance >= 0)) return InvalidArgument(name + ".debug.tolerance: must be a number >= 0");
  if (!(c.trace_threshold >= 0)) return InvalidArgument(name + ".debug.trace_threshold: must be a number >= 0");
  if (c.baseline.metrics_file.empty() != c.test.metrics_file.empty()) {
    return InvalidArgument(name + "." + (c.baseline.metrics_file.empty() ? "baseline" : "test") +
                           ".metrics_file: missing, while the other side names one")
        .WithHint("both sides are compared on the same kind of file: give metrics_file on both, or on neither");
  }
  if (!c.baseline.metrics_file.empty() && !c.log_keywords.empty()) {
    return InvalidArgument(name + ".debug.log_keywords: not with metrics_file (the metrics file's keys are compared)");
  }
  return c;
}

Result<ComparerConfig> ReadComparerConfig(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read the config file " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  if (buf.str().size() > (4u << 20)) return InvalidArgument(path.string() + ": larger than 4 MiB");
  PARITY_ASSIGN_OR_RETURN(nlohmann::json value, ParseJsonDocument(buf.str(), path.string()));
  PARITY_ASSIGN_OR_RETURN(ComparerConfig config, ParseComparerConfig(value, path.filename().string()));
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  for (ComparerSide* side : {&config.baseline, &config.test}) {
    if (side->mode == "local" && !side->code_path.empty() && std::filesystem::path(side->code_path).is_relative()) {
      side->code_path = (folder / side->code_path).lexically_normal().string();
    }
  }
  if (!config.compare_output_dir.empty() && std::filesystem::path(config.compare_output_dir).is_relative()) {
    config.compare_output_dir = (folder / config.compare_output_dir).lexically_normal().string();
  }
  return config;
}

nlohmann::json Redacted(const ComparerConfig& c) {
  return {{"baseline", SideJson(c.baseline)},
          {"test", SideJson(c.test)},
          {"msprobe",
           {{"baseline_data_dir", c.baseline_data_dir}, {"test_data_dir", c.test_data_dir},
            {"parse_code_dir", c.parse_code_dir}, {"compare_output_dir", c.compare_output_dir}}},
          {"debug",
           {{"max_iterations", c.max_iterations}, {"tolerance", c.tolerance}, {"log_keywords", c.log_keywords},
            {"trace_threshold", c.trace_threshold}}}};
}

}  // namespace parity::workflow
