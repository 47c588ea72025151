#include "domain/env/probe.h"

#include <openssl/evp.h>

#include <cstdio>
#include <sstream>

#include "domain/env/parsers.h"
#include "domain/env/probe_script.h"

namespace parity::env {

namespace {

constexpr size_t kEvidenceCap = 8000;

std::string Cap(const std::string& s) {
  if (s.size() <= kEvidenceCap) return s;
  return s.substr(0, kEvidenceCap) + "\n[... " + std::to_string(s.size() - kEvidenceCap) + " more bytes]";
}

std::string TrimNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  while (!s.empty() && s.front() == '\n') s.erase(0, 1);
  return s;
}

// Splits the script output into its sections; "file <path>" sections keep their path.
std::vector<std::pair<std::string, std::string>> Sections(const std::string& out) {
  static const std::string kMarker = "\n@@parity ";
  std::vector<std::pair<std::string, std::string>> sections;
  size_t pos = out.find(kMarker);
  while (pos != std::string::npos) {
    size_t name_start = pos + kMarker.size();
    size_t name_end = out.find('\n', name_start);
    if (name_end == std::string::npos) break;
    size_t next = out.find(kMarker, name_end);
    std::string body = out.substr(name_end + 1, (next == std::string::npos ? out.size() : next) - name_end - 1);
    sections.emplace_back(out.substr(name_start, name_end - name_start), body);
    pos = next;
  }
  return sections;
}

std::vector<std::string> LinesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) if (!line.empty()) lines.push_back(line);
  return lines;
}

json Anomaly(std::string code, std::string message, json evidence) {
  return {{"code", std::move(code)}, {"message", std::move(message)}, {"evidence", std::move(evidence)}};
}

// Variables that change numerics or which devices and libraries are used; PATH-like
// variables are reported but left out of the fingerprint (they differ per checkout).
bool InFingerprint(const std::string& name) {
  return name != "PATH" && name != "LD_LIBRARY_PATH" && name != "PYTHONPATH";
}

}  // namespace

std::string FingerprintOf(const json& summary) {
  std::string text = summary.dump();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", digest[i]);
    hex += buf;
  }
  return hex;
}

json DiffSummaries(const json& mine, const json& other) {
  json diffs = json::array();
  json a = mine.flatten(), b = other.flatten();
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto o = b.find(it.key());
    if (o == b.end()) diffs.push_back({{"key", it.key()}, {"this", it.value()}, {"other", nullptr}});
    else if (*o != it.value()) diffs.push_back({{"key", it.key()}, {"this", it.value()}, {"other", *o}});
  }
  for (auto it = b.begin(); it != b.end(); ++it) {
    if (a.find(it.key()) == a.end()) diffs.push_back({{"key", it.key()}, {"this", nullptr}, {"other", it.value()}});
  }
  return diffs;
}

Result<json> Probe(run::Host& host, const ProbeOptions& options) {
  std::vector<std::string> argv = {"sh", "-c", kProbeScript, "parity-probe", options.python, options.dev_dir,
                                   options.search_paths.empty() ? "1" : "0", kPythonProbe};
  argv.insert(argv.end(), options.search_paths.begin(), options.search_paths.end());
  run::ExecOptions exec;
  exec.env_set = options.env;
  exec.timeout = std::chrono::seconds(options.timeout_s);
  exec.output_cap = 8u << 20;
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, host.Exec(argv, exec));
  if (r.timed_out) {
    return DeadlineExceeded("the environment probe on " + host.Describe() + " did not finish in " +
                            std::to_string(options.timeout_s) + " s")
        .WithEvidence("output_tail", Cap(r.out + r.err));
  }

  json raw = json::object();
  std::vector<std::pair<std::string, std::string>> files;
  for (auto& [name, body] : Sections(r.out)) {
    if (name.rfind("file ", 0) == 0) files.emplace_back(name.substr(5), body);
    else raw[name] = Cap(TrimNewlines(body));
  }
  if (!raw.contains("end")) {
    return Unavailable("the environment probe on " + host.Describe() + " stopped early (exit " +
                       std::to_string(r.exit_code) + ")")
        .WithEvidence("stdout", Cap(r.out))
        .WithEvidence("stderr", Cap(r.err));
  }
  auto section = [&](const char* name) { return raw.value(name, std::string()); };
  auto field = [&](const char* name, const char* key) -> std::string {
    std::string prefix = std::string(key) + "=";
    for (const auto& line : LinesOf(section(name))) if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    return {};
  };

  json report;
  report["host"] = host.Describe();
  report["hostname"] = LinesOf(section("host")).size() > 1 ? LinesOf(section("host"))[1] : "";
  report["kernel"] = LinesOf(section("host")).empty() ? "" : LinesOf(section("host"))[0];
  json anomalies = json::array();

  // CANN installs and the driver.
  json installs = json::array(), version_cfgs = json::array();
  json driver = nullptr;
  std::string cann_version;
  for (const auto& [path, body] : files) {
    std::string name = std::filesystem::path(path).filename().string();
    if (name == "version.cfg") {
      auto components = ParseVersionCfg(body);
      std::string v = components.count("toolkit") ? components["toolkit"]
                      : components.count("runtime") ? components["runtime"] : "";
      version_cfgs.push_back({{"path", path}, {"version", v}, {"components", components}});
      if (cann_version.empty()) cann_version = v;
    } else if (path.find("/driver/version.info") != std::string::npos || name == "ascend_install.info") {
      auto kv = ParseKeyValues(body);
      if (driver.is_null()) driver = json{{"version", nullptr}, {"files", json::array()}};
      driver["files"].push_back({{"path", path}, {"values", kv}});
      for (const char* key : {"Version", "version", "package_version"}) {
        if (driver["version"].is_null() && kv.count(key)) driver["version"] = kv[key];
      }
    } else {
      auto kv = ParseKeyValues(body);
      installs.push_back({{"path", path}, {"package_name", kv.count("package_name") ? kv["package_name"] : ""},
                          {"version", kv.count("version") ? kv["version"] : ""}, {"values", kv}});
      if (cann_version.empty() && kv.count("version") &&
          kv["package_name"].find("toolkit") != std::string::npos) cann_version = kv["version"];
    }
  }
  json roots = LinesOf(section("roots"));
  report["cann"] = {{"version", cann_version.empty() ? json(nullptr) : json(cann_version)},
                    {"version_cfg", version_cfgs}, {"install_info", installs}, {"searched", roots}};
  report["driver"] = driver;
  if (version_cfgs.empty()) {
    anomalies.push_back(Anomaly("no_version_cfg", "no CANN version.cfg was found in any searched path",
                                {{"searched", roots}, {"files_found", LinesOf(section("files"))}}));
  }

  // Environment variables.
  json env = json::object();
  for (const auto& line : LinesOf(section("env"))) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  report["env"] = env;
  if (!env.contains("ASCEND_HOME_PATH") && !env.contains("ASCEND_TOOLKIT_HOME") && !env.contains("ASCEND_HOME")) {
    anomalies.push_back(Anomaly("no_ascend_env", "none of ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, ASCEND_HOME is set",
                                {{"env", env}, {"hint", "source <CANN>/set_env.sh in the shell that runs training"}}));
  }
  for (const auto& line : LinesOf(section("ascend_dirs"))) {
    size_t eq = line.find('=');
    if (eq != std::string::npos && line.substr(eq + 1) == "missing") {
      std::string var = line.substr(0, eq);
      anomalies.push_back(Anomaly("ascend_path_missing", var + " points to a directory that does not exist",
                                  {{var, env.value(var, "")}}));
    }
  }

  // NPUs: npu-smi and device nodes.
  json npu = json::object();
  std::string npu_smi_status = LinesOf(section("npu_smi")).empty() ? "absent" : LinesOf(section("npu_smi"))[0];
  bool npu_smi_present = npu_smi_status != "absent";
  bool npu_smi_ok = false;
  npu["npu_smi"] = {{"present", npu_smi_present}};
  if (npu_smi_present) {
    std::string out = section("npu_smi_output");
    std::string exit = field("npu_smi", "exit");
    NpuSmiInfo info = ParseNpuSmiInfo(out);
    json devices = json::array();
    for (const auto& d : info.devices) devices.push_back(ToJson(d));
    npu_smi_ok = exit == "0";
    npu["npu_smi"] = {{"present", true}, {"path", field("npu_smi", "path")}, {"exit_code", exit},
                      {"version", info.version}, {"devices", devices}, {"output", Cap(out)}};
    if (!npu_smi_ok) {
      anomalies.push_back(Anomaly("npu_smi_failed", "npu-smi info exited with " + exit, {{"output", Cap(out)}}));
    } else if (info.devices.empty()) {
      anomalies.push_back(Anomaly("npu_smi_no_devices", "npu-smi info listed no NPU", {{"output", Cap(out)}}));
    }
    for (const auto& d : info.devices) {
      if (d.health != "OK") {
        anomalies.push_back(Anomaly("npu_unhealthy", "NPU " + std::to_string(d.npu) + " reports health " + d.health,
                                    {{"device", ToJson(d)}}));
      }
    }
  }
  json nodes = LinesOf(section("davinci"));
  npu["device_nodes"] = nodes;
  int davinci_count = 0;
  for (const auto& n : nodes) {
    std::string s = n.get<std::string>();
    if (s.rfind("davinci", 0) == 0 && s != "davinci_manager") ++davinci_count;
  }
  npu["davinci_count"] = davinci_count;
  report["npu"] = npu;
  if (!npu_smi_ok && davinci_count == 0) {
    anomalies.push_back(Anomaly("no_npu", "neither npu-smi nor /dev/davinci* is available",
                                {{"npu_smi", npu_smi_present ? section("npu_smi_output") : "npu-smi not on PATH"},
                                 {"dev_dir", options.dev_dir}, {"device_nodes", nodes}}));
  }

  // The interpreter.
  json python = {{"interpreter", options.python}, {"exit_code", field("python", "exit")}};
  std::string py_out = section("python_output");
  json py;
  for (const auto& line : LinesOf(py_out)) {
    if (line.rfind("PARITY_PY_JSON=", 0) == 0) py = json::parse(line.substr(15), nullptr, false);
  }
  if (py.is_object()) {
    for (auto it = py.begin(); it != py.end(); ++it) python[it.key()] = it.value();
    if (py.value("torch", json()).is_null()) {
      anomalies.push_back(Anomaly("torch_import_failed", "import torch failed in " + options.python,
                                  {{"output", Cap(py.value("torch_error", std::string()))}}));
    }
    if (py.value("torch_npu", json()).is_null()) {
      anomalies.push_back(Anomaly("torch_npu_import_failed", "import torch_npu failed in " + options.python,
                                  {{"output", Cap(py.value("torch_npu_error", std::string()))}}));
    }
  } else {
    python["output"] = Cap(py_out);
    anomalies.push_back(Anomaly("python_failed", "the interpreter " + options.python + " could not be run",
                                {{"exit_code", field("python", "exit")}, {"output", Cap(py_out)}}));
  }
  report["python"] = python;

  // GPUs.
  json gpu = {{"present", false}};
  if (!LinesOf(section("nvidia_smi")).empty() && LinesOf(section("nvidia_smi"))[0] != "absent") {
    std::string out = section("nvidia_smi_output");
    json gpus = json::array();
    for (const auto& g : ParseNvidiaSmiCsv(out)) gpus.push_back(ToJson(g));
    gpu = {{"present", true}, {"exit_code", field("nvidia_smi", "exit")}, {"gpus", gpus}, {"output", Cap(out)}};
    if (field("nvidia_smi", "exit") != "0") {
      anomalies.push_back(Anomaly("nvidia_smi_failed", "nvidia-smi exited with " + field("nvidia_smi", "exit"),
                                  {{"output", Cap(out)}}));
    }
  }
  report["gpu"] = gpu;

  report["cpu"] = {{"arch", field("cpu", "arch")}, {"model", field("cpu", "model")}, {"cores", field("cpu", "cores")}};
  json memory = json::object();
  for (const auto& line : LinesOf(section("memory"))) {
    std::istringstream in(line);
    std::string key, value;
    in >> key >> value;
    if (!key.empty()) memory[key.substr(0, key.size() - 1) + "_kib"] = value;
  }
  report["memory"] = memory;

  std::string accelerator = (npu_smi_ok || davinci_count > 0) && !python.value("torch_npu", json()).is_null() ? "npu"
                            : python.value("cuda_available", false)                                         ? "cuda"
                            : (npu_smi_ok || davinci_count > 0)                                             ? "npu (torch_npu missing)"
                                                                                                            : "cpu";
  report["accelerator"] = accelerator;
  report["anomalies"] = anomalies;

  // The fingerprint: what must match for two runs to be comparable bit for bit.
  json names = json::array();
  if (npu_smi_present) for (const auto& d : npu["npu_smi"]["devices"]) names.push_back(d["name"]);
  json gpu_names = json::array();
  if (gpu.value("present", false)) for (const auto& g : gpu["gpus"]) gpu_names.push_back(g["name"]);
  json fp_env = json::object();
  for (auto it = env.begin(); it != env.end(); ++it) if (InFingerprint(it.key())) fp_env[it.key()] = it.value();
  json summary = {
      {"accelerator", accelerator},
      {"cann", report["cann"]["version"]},
      {"driver", driver.is_null() ? json(nullptr) : driver["version"]},
      {"npu_smi", npu_smi_present ? npu["npu_smi"]["version"] : json(nullptr)},
      {"npus", names},
      {"davinci_count", davinci_count},
      {"gpus", gpu_names},
      {"nvidia_driver", gpu.value("present", false) && !gpu["gpus"].empty() ? gpu["gpus"][0]["driver_version"] : json(nullptr)},
      {"python", python.value("python", json(nullptr))},
      {"torch", python.value("torch", json(nullptr))},
      {"torch_cuda", python.value("torch_cuda", json(nullptr))},
      {"torch_npu", python.value("torch_npu", json(nullptr))},
      {"cpu_arch", field("cpu", "arch")},
      {"env", fp_env},
  };
  report["fingerprint"] = {{"sha256", FingerprintOf(summary)}, {"summary", summary}};
  report["raw"] = raw;
  return report;
}

}  // namespace parity::env
