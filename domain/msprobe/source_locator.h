// From a stack frame recorded on the training host to the user's code here: map the path
// (explicit prefix rules first, then the longest path suffix that exists under the
// worktree), read the line, check it against the code msprobe recorded, and find the git
// hunk between the baseline and candidate commits that covers it (libgit2, no checkout).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/stack.h"
#include "support/status.h"

namespace parity::msprobe {

struct PathMapping {
  std::string from;  // a prefix of paths on the training host: /home/ma-user/work/toy-block/
  std::string to;    // the local folder it corresponds to
};

struct LocateOptions {
  std::filesystem::path worktree;          // where the candidate's code is, locally (may be empty)
  std::vector<PathMapping> path_map;
  // Git repository (default: the worktree). A file in a linked worktree of it (git worktree
  // add) is diffed through that worktree, which shares its objects and refs; HEAD is then the
  // worktree's own.
  std::filesystem::path repo;
  std::string baseline_ref, candidate_ref; // commits to diff (candidate default HEAD)
  // Path fragments that mark user code in the stacks (IsUserFrame); empty: the built-in rule.
  std::vector<std::string> user_code;
};

struct Hunk {
  std::string file;         // path in the repository
  int old_start = 0, old_lines = 0, new_start = 0, new_lines = 0;
  std::string header;       // "@@ -64 +64 @@ ..."
  std::vector<std::string> lines;  // "-old", "+new"
};

struct SourceLocation {
  Frame frame;                                   // as recorded
  std::optional<std::filesystem::path> local;    // the mapped local file
  std::string mapped_by;                         // path_map | suffix | as_is
  std::optional<std::string> line_text;          // the line read locally
  std::optional<bool> matches_recorded;          // line_text vs the code msprobe recorded
  std::optional<Hunk> hunk;                      // the changed hunk covering the line
  bool git_checked = false;
  std::vector<std::string> notes;                // what could not be done, and why
};

// Never fails for a missing file or repository: that is recorded in notes.
SourceLocation LocateSource(const Frame& frame, const LocateOptions& options);

// The changed hunks of one file between two refs (context 0); an empty file: of every file.
Result<std::vector<Hunk>> DiffHunks(const std::filesystem::path& repo, const std::string& old_ref,
                                    const std::string& new_ref, const std::string& file_in_repo);

nlohmann::json ToJson(const SourceLocation& location);
nlohmann::json ToJson(const Hunk& hunk);

}  // namespace parity::msprobe
