#include "tests/run/slurm_fixture.h"

#include <stdlib.h>

#include <fstream>

#include "support/subprocess.h"

#ifndef PARITY_SLURM_CLUSTER_SCRIPT
#error "PARITY_SLURM_CLUSTER_SCRIPT must name tests/run/slurm_cluster.py"
#endif

namespace parity::testing {

namespace fs = std::filesystem;

Result<std::unique_ptr<SlurmCluster>> SlurmCluster::Start(int cpus) {
  char tmpl[] = "/tmp/parity-slurm.XXXXXX";
  if (!mkdtemp(tmpl)) return Unavailable("mkdtemp failed");
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster(tmpl));
  ProcessOptions o;
  o.argv = {"/usr/bin/python3", PARITY_SLURM_CLUSTER_SCRIPT, "start", cluster->dir_.string(), "--cpus",
            std::to_string(cpus)};
  o.timeout = std::chrono::minutes(4);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
  if (!r.success()) return ProcessFailure("starting the test Slurm cluster", o, r);
  setenv("SLURM_CONF", cluster->conf().c_str(), 1);
  fs::create_directories(cluster->dir_ / "xdg/parity");
  setenv("XDG_CONFIG_HOME", (cluster->dir_ / "xdg").c_str(), 1);
  return cluster;
}

SlurmCluster::~SlurmCluster() {
  ProcessOptions o;
  o.argv = {"/usr/bin/python3", PARITY_SLURM_CLUSTER_SCRIPT, "stop", dir_.string()};
  o.timeout = std::chrono::minutes(2);
  (void)RunProcess(o);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void SlurmCluster::WriteSettings(const nlohmann::json& settings) const {
  std::ofstream(dir_ / "xdg/parity/slurm.json") << settings.dump(2) << "\n";
}

std::string SlurmCluster::Sacct(const std::string& job_id, const std::string& fields) const {
  ProcessOptions o;
  o.argv = {"sacct", "-n", "-P", "-X", "-j", job_id, "-o", fields};
  o.timeout = std::chrono::seconds(60);
  auto r = RunProcess(o);
  if (!r.ok() || !r->success()) return "";
  return r->out.substr(0, r->out.find('\n'));
}

}  // namespace parity::testing
