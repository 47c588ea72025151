// probe_env's domain: collects what decides a training's numerics on a host (CANN installs,
// driver, npu-smi, /dev/davinci*, Ascend variables, the interpreter's torch / torch_npu /
// CUDA, nvidia-smi, CPU and memory) by running one fixed shell script there, locally or
// over SSH, and parses its sections. Every anomaly the pre-merge skill lists is reported
// with the output it was judged on; none stops the probe, and none is papered over.
//
// The fingerprint is the sha256 of a canonical summary (versions and the variables that
// change numerics), so two runs' environments compare by one string and differ by key.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/run/host.h"
#include "support/status.h"

namespace parity::env {

using json = nlohmann::json;

struct ProbeOptions {
  std::string python = "/usr/bin/python3";  // the interpreter the training will use
  // Where to look for CANN (version.cfg, ascend_*_install.info, driver/version.info).
  // Empty: /usr/local/Ascend, /home/*/Ascend, /home/developer, /opt/Ascend and
  // /etc/ascend_install.info. $ASCEND_HOME_PATH / $ASCEND_TOOLKIT_HOME are always searched.
  std::vector<std::string> search_paths;
  std::string dev_dir = "/dev";  // where davinci nodes live (a test points it elsewhere)
  // Variables set for the probe, e.g. the environment a training will get; they count in
  // the fingerprint as if exported on the host.
  std::map<std::string, std::string> env;
  int timeout_s = 120;
};

// The probe report: {host, cann, driver, npu, gpu, python, cpu, memory, env, anomalies,
// accelerator, fingerprint: {sha256, summary}, raw: {section: text}}.
Result<json> Probe(run::Host& host, const ProbeOptions& options);

// sha256 hex of the canonical dump of `summary`.
std::string FingerprintOf(const json& summary);
// Keys (dotted paths) whose values differ between two fingerprint summaries.
json DiffSummaries(const json& mine, const json& other);

}  // namespace parity::env
