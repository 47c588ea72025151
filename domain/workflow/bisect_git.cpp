#include "domain/workflow/bisect_git.h"

#include <sstream>

#include "support/subprocess.h"

namespace parity::workflow {

namespace {

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "<commit> <parent>...\x1f<subject>" per line, as the format below prints it.
Result<std::vector<HistoryCommit>> ParseRows(const std::string& text) {
  std::vector<HistoryCommit> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    size_t sep = line.find('\x1f');
    if (sep == std::string::npos) return Internal("unexpected git output line: " + line);
    std::vector<std::string> ids = Words(line.substr(0, sep));
    if (ids.empty()) return Internal("unexpected git output line: " + line);
    HistoryCommit c;
    c.commit = ids[0];
    c.parents.assign(ids.begin() + 1, ids.end());
    c.subject = line.substr(sep + 1);
    out.push_back(std::move(c));
  }
  return out;
}

constexpr const char* kRowFormat = "--format=%H %P%x1f%s";

}  // namespace

Result<std::string> BisectGit::Git(const std::vector<std::string>& args, const std::string& what) const {
  ProcessOptions o;
  o.argv = {"git", "-C", repo_.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}, {"LC_ALL", "C"}};
  o.timeout = std::chrono::seconds(120);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
  if (!r.success()) return ProcessFailure(what, o, r);
  return r.out;
}

Result<std::string> BisectGit::Resolve(const std::string& rev) const {
  auto out = Git({"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}, "resolving " + rev);
  if (!out.ok()) {
    return NotFound("the revision \"" + rev + "\" is not a commit of " + repo_.string())
        .WithHint("name a branch, tag or commit of that repository (git log --oneline shows them)");
  }
  std::string id = *out;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

Result<bool> BisectGit::IsAncestor(const std::string& ancestor, const std::string& descendant) const {
  ProcessOptions o;
  o.argv = {"git", "-C", repo_.string(), "merge-base", "--is-ancestor", ancestor, descendant};
  o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};
  o.timeout = std::chrono::seconds(120);
  PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
  if (r.signal == 0 && !r.timed_out && (r.exit_code == 0 || r.exit_code == 1)) return r.exit_code == 0;
  return ProcessFailure("git merge-base --is-ancestor", o, r);
}

Result<std::vector<HistoryCommit>> BisectGit::FirstParentRange(const std::string& good, const std::string& bad) const {
  PARITY_ASSIGN_OR_RETURN(std::string out, Git({"rev-list", "--first-parent", "--reverse", kRowFormat, good + ".." + bad},
                                               "listing the first-parent history " + good + ".." + bad));
  // rev-list with a format prints "commit <id>" header lines before each row.
  std::string rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("commit ", 0) == 0 && line.find('\x1f') == std::string::npos) continue;
    rows += line + "\n";
  }
  return ParseRows(rows);
}

Result<HistoryCommit> BisectGit::Describe(const std::string& commit) const {
  PARITY_ASSIGN_OR_RETURN(std::string out, Git({"show", "-s", kRowFormat, commit}, "describing " + commit));
  PARITY_ASSIGN_OR_RETURN(auto rows, ParseRows(out));
  if (rows.size() != 1) return Internal("git show -s " + commit + " printed " + std::to_string(rows.size()) + " rows");
  return rows[0];
}

Result<std::string> BisectGit::ShowDiff(const std::string& commit, size_t max_bytes) const {
  PARITY_ASSIGN_OR_RETURN(std::string out, Git({"show", "--diff-merges=first-parent", "--format=commit %H%nsubject %s", "--stat",
                                                "--patch", "--no-color", "--no-ext-diff", commit},
                                               "showing the diff of " + commit));
  if (out.size() > max_bytes) out = out.substr(0, max_bytes) + "\n[... diff cut at " + std::to_string(max_bytes) + " bytes]\n";
  return out;
}

}  // namespace parity::workflow
