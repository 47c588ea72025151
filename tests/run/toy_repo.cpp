#include "tests/run/toy_repo.h"

#include <cstdlib>
#include <stdexcept>

#include "domain/run/launch.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"

namespace parity::testing {

namespace fs = std::filesystem;

std::string Capture(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProcessOptions o;
  o.argv = argv;
  o.cwd = cwd;
  o.timeout = std::chrono::seconds(120);
  o.env_set = testing_support::GitTestEnv();
  auto r = RunProcess(o);
  if (!r.ok() || !r->success()) {
    throw std::runtime_error("command failed: " + ShellQuote(argv) + "\n" + (r.ok() ? r->err : r.status().message()));
  }
  return r->out;
}

ToyRepo::ToyRepo() {
  char tmpl[] = "/tmp/parity-run-XXXXXX";
  root_ = ::mkdtemp(tmpl);
  fs::copy(PARITY_TOY_TRAINER_DIR, repo(), fs::copy_options::recursive);
  fs::remove_all(repo() / "outputs");
  Capture({"git", "init", "-q", "-b", "main"}, repo());
  Capture({"git", "add", "-A"}, repo());
  Capture({"git", "commit", "-q", "-m", "toy trainer"}, repo());
}

ToyRepo::~ToyRepo() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

run::JobSpec ToyJobSpec(const ToyRepo& toy, const std::string& phase, const std::string& side, int steps) {
  run::LaunchRequest r;
  r.phase = phase;
  r.model = "toy";
  r.config = "toy_small";
  r.dataset_path = "data/corpus.txt";
  r.steps = steps;
  r.checkpoint_dir = (toy.report() / "initial_ckpt_toy_small").string();
  auto launch = run::BuildLaunch(r);
  if (!launch.ok()) throw std::runtime_error(launch.status().ToString());
  run::JobSpec spec;
  spec.phase = phase;
  spec.side = side;
  spec.config = "toy_small";
  spec.launcher = "torchtitan";
  spec.argv = launch->argv;
  spec.cwd = toy.repo().string();
  spec.expected_steps = launch->expected_steps;
  spec.checkpoint_to_move = launch->checkpoint_to_move;
  spec.checkpoint_dir = r.checkpoint_dir;
  return spec;
}

std::string ToyRepo::head() const {
  std::string out = Capture({"git", "-C", repo().string(), "rev-parse", "HEAD"});
  return out.substr(0, out.find('\n'));
}

}  // namespace parity::testing
