#include "tests/git/git_fixture.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "support/subprocess.h"

namespace parity::git::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "parity-git-XXXXXX").string();
  char* made = ::mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr);
  path_ = fs::canonical(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

namespace {
int commit_counter = 0;
}

int GitStatus(const fs::path& cwd, const std::vector<std::string>& args, std::string* output) {
  ProcessOptions opts;
  opts.argv = {"git"};
  opts.argv.insert(opts.argv.end(), args.begin(), args.end());
  opts.cwd = cwd;
  std::string date = std::to_string(1767268800 + 86400 * commit_counter++) + " +0000";
  opts.env_set = {{"GIT_AUTHOR_NAME", "Parity Test"}, {"GIT_AUTHOR_EMAIL", "test@parity.invalid"},
                  {"GIT_COMMITTER_NAME", "Parity Test"}, {"GIT_COMMITTER_EMAIL", "test@parity.invalid"},
                  {"GIT_AUTHOR_DATE", date}, {"GIT_COMMITTER_DATE", date},
                  {"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"},
                  {"GIT_TERMINAL_PROMPT", "0"}};
  opts.timeout = std::chrono::seconds(60);
  opts.merge_stderr = true;
  auto run = RunProcess(opts);
  if (!run.ok()) {
    ADD_FAILURE() << run.status().ToString();
    return -1;
  }
  if (output) *output = run->out;
  return run->success() ? 0 : (run->exit_code == 0 ? -1 : run->exit_code);
}

std::string Git(const fs::path& cwd, const std::vector<std::string>& args) {
  std::string out;
  int rc = GitStatus(cwd, args, &out);
  if (rc != 0) {
    std::string cmd = "git";
    for (const auto& a : args) cmd += " " + a;
    ADD_FAILURE() << cmd << " in " << cwd << " failed (" << rc << "):\n" << out;
    return "";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

void WriteFile(const fs::path& file, const std::string& content, bool executable) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
  fs::permissions(file, executable ? fs::perms(0755) : fs::perms(0644), fs::perm_options::replace);
}

std::string ReadFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool IsExecutable(const fs::path& file) {
  return (fs::status(file).permissions() & fs::perms::owner_exec) != fs::perms::none;
}

DemoRepos MakeDemoRepos(const fs::path& root) {
  DemoRepos d;
  d.root = root;
  fs::path seed = root / "seed";
  fs::create_directories(seed);
  Git(seed, {"init", "-q", "-b", "master"});
  WriteFile(seed / "model.py", "import torch\n\ndef forward(x):\n    return x * 2\n");
  WriteFile(seed / "utils/old_name.py", "def helper():\n    return 1\n\n# a long enough body\n# for rename detection\n");
  WriteFile(seed / "scripts/run_train.sh", "#!/bin/bash\npython train.py \"$@\"\n", /*executable=*/true);
  WriteFile(seed / "train_configs/toy.toml", "[training]\nsteps = 10\n");
  WriteFile(seed / "README.md", "toy project\n");
  Git(seed, {"add", "-A"});
  Git(seed, {"commit", "-q", "-m", "initial"});
  WriteFile(seed / "model.py", "import torch\n\ndef forward(x):\n    return x * 2 + 1\n");
  Git(seed, {"commit", "-q", "-am", "common base"});
  d.base = Git(seed, {"rev-parse", "HEAD"});

  d.origin_bare = root / "origin.git";
  d.cann_bare = root / "cann.git";
  Git(root, {"init", "-q", "--bare", "-b", "master", d.origin_bare.string()});
  Git(root, {"init", "-q", "--bare", "-b", "master", d.cann_bare.string()});

  WriteFile(seed / "README.md", "toy project\nNPU fix on the cann fork\n");
  Git(seed, {"commit", "-q", "-am", "cann: npu fix"});
  d.cann_tip = Git(seed, {"rev-parse", "HEAD"});
  Git(seed, {"push", "-q", d.cann_bare.string(), "master"});
  Git(seed, {"reset", "-q", "--hard", d.base});
  WriteFile(seed / "other.py", "print('upstream')\n");
  Git(seed, {"add", "other.py"});
  Git(seed, {"commit", "-q", "-m", "origin: upstream change"});
  d.origin_tip = Git(seed, {"rev-parse", "HEAD"});
  Git(seed, {"push", "-q", d.origin_bare.string(), "master"});

  d.work = root / "proj";
  Git(root, {"clone", "-q", d.origin_bare.string(), d.work.string()});
  Git(d.work, {"remote", "add", "cann", d.cann_bare.string()});
  Git(d.work, {"fetch", "-q", "cann"});
  Git(d.work, {"checkout", "-q", "-b", "feature", "--track", "origin/master"});
  WriteFile(d.work / "model.py", "import torch\n\ndef forward(x):\n    y = x * 2\n    return y + 1\n");
  Git(d.work, {"mv", "utils/old_name.py", "utils/new_name.py"});
  Git(d.work, {"commit", "-q", "-am", "candidate: refactor forward"});
  d.feature_tip = Git(d.work, {"rev-parse", "HEAD"});

  WriteFile(d.work / "README.md", "toy project\nwork in progress\n");
  Git(d.work, {"stash", "push", "-q", "-m", "wip readme"});

  WriteFile(d.work / "scripts/run_train.sh", "#!/bin/bash\nexport HCCL_DETERMINISTIC=true\npython train.py \"$@\"\n", true);
  WriteFile(d.work / "model.py", "import torch\n\ndef forward(x):\n    y = x * 2\n    print(y)\n    return y + 1\n");
  WriteFile(d.work / "train_configs/toy.toml", "[training]\nsteps = 100\n");
  Git(d.work, {"add", "train_configs/toy.toml"});
  WriteFile(d.work / "notes.txt", "my notes\n");
  WriteFile(d.work / "train_configs/debug.toml", "[debug]\nseed = 42\n");
  WriteFile(d.work / "utils/helper.py", "def extra():\n    return 2\n");
  return d;
}

std::map<std::string, std::string> Fingerprint(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    std::string rel = p.lexically_relative(dir).generic_string();
    struct stat st{};
    ::lstat(p.c_str(), &st);
    std::string mode = std::to_string(st.st_mode);
    if (S_ISLNK(st.st_mode)) out[rel] = "link " + mode + " " + fs::read_symlink(p).string();
    else if (S_ISDIR(st.st_mode)) out[rel] = "dir " + mode;
    else out[rel] = "file " + mode + " " + ReadFile(p);
  }
  return out;
}

std::string FingerprintDiff(const std::map<std::string, std::string>& before,
                            const std::map<std::string, std::string>& after) {
  std::string out;
  for (const auto& [path, entry] : before) {
    auto it = after.find(path);
    if (it == after.end()) out += "removed: " + path + "\n";
    else if (it->second != entry) out += "changed: " + path + "\n";
  }
  for (const auto& [path, entry] : after) {
    if (!before.count(path)) out += "added: " + path + "\n";
  }
  return out;
}

}  // namespace parity::git::testing
