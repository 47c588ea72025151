// Real git repositories for the tests, made with the git command line: a "user" clone with
// two remotes (origin and cann) whose master branches diverged from a common base, a
// feature branch one commit ahead of origin/master (a modification and a rename), a stash
// entry, and uncommitted work of every kind. Dates are fixed so commits are reproducible.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace parity::git::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs `git args...` in `cwd` with a fixed identity, dates and an empty global config;
// fails the current test (and returns "") when git exits non-zero.
std::string Git(const std::filesystem::path& cwd, const std::vector<std::string>& args);
// Same, but returns the exit code and leaves judging to the caller.
int GitStatus(const std::filesystem::path& cwd, const std::vector<std::string>& args, std::string* output);

void WriteFile(const std::filesystem::path& file, const std::string& content, bool executable = false);
std::string ReadFile(const std::filesystem::path& file);
bool IsExecutable(const std::filesystem::path& file);

struct DemoRepos {
  std::filesystem::path root;  // holds everything below
  std::filesystem::path work;  // the user's clone: <root>/proj
  std::filesystem::path origin_bare, cann_bare;
  std::string base;         // common ancestor of origin/master and cann/master
  std::string origin_tip;   // origin/master (and local master)
  std::string cann_tip;     // cann/master
  std::string feature_tip;  // HEAD (branch feature)
};

// Builds the repositories under `root`.
DemoRepos MakeDemoRepos(const std::filesystem::path& root);

// Every file, symlink and folder under `dir` (the .git folder included) with its type,
// permission bits and exact content: equal fingerprints mean a bit-for-bit unchanged tree.
std::map<std::string, std::string> Fingerprint(const std::filesystem::path& dir);
// The paths whose entries differ between two fingerprints ("" when equal), for messages.
std::string FingerprintDiff(const std::map<std::string, std::string>& before,
                            const std::map<std::string, std::string>& after);

}  // namespace parity::git::testing
