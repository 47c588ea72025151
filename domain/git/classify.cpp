#include "domain/git/classify.h"

#include <algorithm>
#include <array>
#include <map>

namespace parity::git {

const char* OriginName(ChangeOrigin origin) {
  switch (origin) {
    case ChangeOrigin::kCommitted: return "committed";
    case ChangeOrigin::kUncommitted: return "uncommitted";
    case ChangeOrigin::kUntracked: return "untracked";
    case ChangeOrigin::kBoth: return "committed+uncommitted";
  }
  return "committed";
}

namespace {

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view Extension(std::string_view path) {
  std::string_view base = Basename(path);
  size_t dot = base.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? std::string_view() : base.substr(dot);
}

bool HasDirectory(std::string_view path, std::string_view dir) {
  std::string needle = "/" + std::string(dir) + "/";
  return ("/" + std::string(path)).find(needle) != std::string::npos;
}

bool IsSourceCode(std::string_view path) {
  static constexpr std::array<std::string_view, 16> kExt = {".py", ".pyx", ".c", ".cc", ".cpp", ".cxx", ".h",
                                                            ".hpp", ".cu", ".cuh", ".rs", ".go", ".java",
                                                            ".js", ".ts", ".proto"};
  return std::find(kExt.begin(), kExt.end(), Extension(path)) != kExt.end();
}

}  // namespace

std::optional<std::string> InfraReason(std::string_view path) {
  std::string_view ext = Extension(path);
  std::string_view base = Basename(path);
  if (ext == ".sh" || ext == ".bash") return "a shell launcher (*" + std::string(ext) + ")";
  static constexpr std::array<std::string_view, 8> kConfigExt = {".toml", ".yaml", ".yml", ".cfg",
                                                                 ".ini", ".conf", ".env", ".json"};
  if (std::find(kConfigExt.begin(), kConfigExt.end(), ext) != kConfigExt.end()) {
    return "a configuration file (*" + std::string(ext) + ")";
  }
  if (base == "Makefile" || base == "Dockerfile" || base == "CMakeLists.txt") return "a build file (" + std::string(base) + ")";
  if (base.rfind("requirements", 0) == 0 && ext == ".txt") return "a dependency list (" + std::string(base) + ")";
  for (std::string_view dir : {"scripts", "configs", "config", "train_configs", "launch", "launchers"}) {
    if (HasDirectory(path, dir)) return "under " + std::string(dir) + "/ (launchers and configs)";
  }
  return std::nullopt;
}

Result<Classification> ProposeClassification(git_repository* repo, const CommitInfo& baseline,
                                             const CommitInfo& candidate, const ClassifyOptions& options) {
  Classification out;
  out.baseline = baseline;
  out.candidate = candidate;
  PARITY_ASSIGN_OR_RETURN(out.committed, DiffCommits(repo, baseline, candidate, options.max_files));
  PARITY_ASSIGN_OR_RETURN(out.uncommitted, DiffUncommitted(repo, options.max_files));

  std::map<std::string, const FileStat*> uncommitted;
  for (const auto& f : out.uncommitted.files) uncommitted[f.path] = &f;

  for (const auto& f : out.committed.files) {
    ClassifiedFile c;
    c.path = f.path;
    c.old_path = f.old_path;
    c.change = f.change;
    c.additions = f.additions;
    c.deletions = f.deletions;
    c.binary = f.binary;
    auto again = uncommitted.find(f.path);
    auto infra = InfraReason(f.path);
    if (again != uncommitted.end() && again->second->change != "deleted") {
      c.origin = ChangeOrigin::kBoth;
      c.allowed = {"A", "B", "C"};
      c.proposed = infra ? "B" : "C";
      c.reason = "changed in " + baseline.ref + ".." + candidate.ref + " and edited again in the working tree; " +
                 (infra ? *infra + ": the working-tree version goes to both sides (A keeps only the committed version)"
                        : std::string("the working-tree version goes to the candidate only (A keeps only the committed version)"));
      uncommitted.erase(again);
    } else {
      c.origin = ChangeOrigin::kCommitted;
      // A file the candidate deleted has no version to copy to the baseline.
      c.allowed = f.change == "deleted" ? std::vector<std::string>{"A"} : std::vector<std::string>{"A", "B"};
      c.proposed = "A";
      c.reason = "committed in " + baseline.ref + ".." + candidate.ref + ": the change under test";
      if (infra && f.change != "deleted") {
        c.reason += "; it is " + *infra + ", choose B if the baseline must run with the candidate's version too";
      }
      if (again != uncommitted.end()) uncommitted.erase(again);
    }
    out.files.push_back(std::move(c));
  }

  std::string own_prefix = options.own_output_dir ? *options.own_output_dir + "/" : "";
  for (const auto& f : out.uncommitted.files) {
    if (!uncommitted.count(f.path)) continue;
    ClassifiedFile c;
    c.path = f.path;
    c.old_path = f.old_path;
    c.change = f.change;
    c.additions = f.additions;
    c.deletions = f.deletions;
    c.binary = f.binary;
    c.origin = f.change == "untracked" ? ChangeOrigin::kUntracked : ChangeOrigin::kUncommitted;
    auto infra = InfraReason(f.path);
    if (f.change == "deleted") {
      c.allowed = {"ignore"};
      c.proposed = "ignore";
      c.reason = "deleted in the working tree and not committed; parity copies files into the worktrees and "
                 "does not replay deletions (commit the deletion to test it)";
    } else if (!own_prefix.empty() && c.origin == ChangeOrigin::kUntracked && f.path.rfind(own_prefix, 0) == 0) {
      c.allowed = {"ignore"};
      c.proposed = "ignore";
      c.reason = "parity's own report directory";
    } else if (infra) {
      c.allowed = {"B", "C", "ignore"};
      c.proposed = "B";
      c.reason = std::string(c.origin == ChangeOrigin::kUntracked ? "untracked" : "uncommitted") + " " + *infra +
                 ": both sides need it, so the runs differ only by the committed code";
    } else if (c.origin == ChangeOrigin::kUncommitted || IsSourceCode(f.path)) {
      c.allowed = {"B", "C", "ignore"};
      c.proposed = "C";
      c.reason = std::string(c.origin == ChangeOrigin::kUntracked ? "untracked source file" : "uncommitted code change") +
                 ": only the candidate gets it (commit it to make it part of the change under test)";
    } else {
      c.allowed = {"B", "C", "ignore"};
      c.proposed = "ignore";
      c.reason = "untracked file that is neither code nor launcher/config: left out of both worktrees";
    }
    out.files.push_back(std::move(c));
  }
  return out;
}

}  // namespace parity::git
