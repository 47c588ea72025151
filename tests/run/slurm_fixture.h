// A real one-node Slurm cluster for tests (tests/run/slurm_cluster.py: munged, MariaDB,
// slurmdbd, slurmctld and slurmd on free loopback ports, all under a temporary folder).
// Start() sets SLURM_CONF for this process, so sbatch/squeue/sacct run by parity (and
// by the test) talk to it, and points XDG_CONFIG_HOME at a folder of its own where
// WriteSettings puts the user's parity/slurm.json. The destructor cancels the cluster's
// jobs and stops every daemon.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::testing {

class SlurmCluster {
 public:
  static Result<std::unique_ptr<SlurmCluster>> Start(int cpus = 8);
  ~SlurmCluster();
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path conf() const { return dir_ / "slurm.conf"; }
  // Writes ${XDG_CONFIG_HOME}/parity/slurm.json.
  void WriteSettings(const nlohmann::json& settings) const;
  // One line of `sacct -n -P -X -j ID -o <fields>` (empty when sacct has no record yet).
  std::string Sacct(const std::string& job_id, const std::string& fields) const;

 private:
  explicit SlurmCluster(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace parity::testing
