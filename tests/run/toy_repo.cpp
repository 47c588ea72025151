#include "tests/run/toy_repo.h"

#include <cstdlib>
#include <stdexcept>

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

std::string ToyRepo::head() const {
  std::string out = Capture({"git", "-C", repo().string(), "rev-parse", "HEAD"});
  return out.substr(0, out.find('\n'));
}

}  // namespace parity::testing
