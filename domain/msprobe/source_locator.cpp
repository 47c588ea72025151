#include "domain/msprobe/source_locator.h"

#include <fstream>

#include "domain/git/git_handle.h"
#include "domain/git/refs.h"

namespace parity::msprobe {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : path) {
    if (c == '/' || c == '\\') {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<std::string> ReadLine(const fs::path& file, int line) {
  std::ifstream in(file, std::ios::binary);
  if (!in || line <= 0) return std::nullopt;
  std::string text;
  for (int i = 1; std::getline(in, text); ++i) {
    if (i == line) {
      if (!text.empty() && text.back() == '\r') text.pop_back();
      return text;
    }
    if (i > 10'000'000) break;
  }
  return std::nullopt;
}

// `file` relative to `root`, when it lies inside it (both canonical or weakly canonical).
std::optional<fs::path> RelativeInside(const fs::path& file, const fs::path& root) {
  std::error_code ec;
  fs::path relative = fs::relative(file, fs::weakly_canonical(root, ec), ec);
  if (ec || relative.empty() || relative.string().rfind("..", 0) == 0) return std::nullopt;
  return relative;
}

// Whether two opened repositories are the same repository (a linked worktree shares the
// main repository's common directory).
bool SameCommonDir(git_repository* a, git_repository* b) {
  std::error_code ec;
  const char* da = git_repository_commondir(a);
  const char* db = git_repository_commondir(b);
  if (!da || !db) return false;
  return fs::weakly_canonical(da, ec) == fs::weakly_canonical(db, ec);
}

}  // namespace

Result<std::vector<Hunk>> DiffHunks(const fs::path& repo_path, const std::string& old_ref, const std::string& new_ref,
                                    const std::string& file_in_repo) {
  PARITY_ASSIGN_OR_RETURN(git::RepoPtr repo, git::OpenRepository(repo_path));
  PARITY_ASSIGN_OR_RETURN(git::CommitInfo old_commit, git::ResolveCommit(repo.get(), old_ref));
  PARITY_ASSIGN_OR_RETURN(git::CommitInfo new_commit, git::ResolveCommit(repo.get(), new_ref));
  auto tree_of = [&](const git::CommitInfo& info) -> Result<git::TreePtr> {
    git_oid oid;
    if (int rc = git_oid_fromstr(&oid, info.commit.c_str()); rc != 0) return git::GitError(rc, "parsing " + info.commit);
    git_commit* commit = nullptr;
    if (int rc = git_commit_lookup(&commit, repo.get(), &oid); rc != 0) return git::GitError(rc, "looking up " + info.ref);
    git::CommitPtr owned(commit);
    git_tree* tree = nullptr;
    if (int rc = git_commit_tree(&tree, commit); rc != 0) return git::GitError(rc, "reading the tree of " + info.ref);
    return git::TreePtr(tree);
  };
  PARITY_ASSIGN_OR_RETURN(git::TreePtr old_tree, tree_of(old_commit));
  PARITY_ASSIGN_OR_RETURN(git::TreePtr new_tree, tree_of(new_commit));
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.context_lines = 0;
  std::string spec = file_in_repo;
  char* specs[] = {spec.data()};
  if (!file_in_repo.empty()) {  // empty: every file
    options.pathspec.strings = specs;
    options.pathspec.count = 1;
    options.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
  }
  git_diff* diff = nullptr;
  if (int rc = git_diff_tree_to_tree(&diff, repo.get(), old_tree.get(), new_tree.get(), &options); rc != 0) {
    return git::GitError(rc, "diffing " + old_ref + ".." + new_ref + " -- " + file_in_repo);
  }
  git::DiffPtr owned_diff(diff);
  std::vector<Hunk> hunks;
  size_t deltas = git_diff_num_deltas(diff);
  for (size_t d = 0; d < deltas; ++d) {
    git_patch* patch = nullptr;
    if (int rc = git_patch_from_diff(&patch, diff, d); rc != 0) return git::GitError(rc, "building the patch");
    git::PatchPtr owned_patch(patch);
    if (!patch) continue;  // binary
    size_t count = git_patch_num_hunks(patch);
    for (size_t h = 0; h < count; ++h) {
      const git_diff_hunk* gh = nullptr;
      size_t lines = 0;
      if (int rc = git_patch_get_hunk(&gh, &lines, patch, h); rc != 0) return git::GitError(rc, "reading a hunk");
      Hunk hunk;
      const git_diff_delta* delta = git_patch_get_delta(patch);
      hunk.file = !file_in_repo.empty() || !delta || !delta->new_file.path ? file_in_repo : delta->new_file.path;
      hunk.old_start = gh->old_start;
      hunk.old_lines = gh->old_lines;
      hunk.new_start = gh->new_start;
      hunk.new_lines = gh->new_lines;
      hunk.header = Trim(std::string(gh->header, gh->header_len));
      for (size_t l = 0; l < lines; ++l) {
        const git_diff_line* line = nullptr;
        if (git_patch_get_line_in_hunk(&line, patch, h, l) != 0 || !line) continue;
        std::string text(line->content, line->content_len);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        hunk.lines.push_back(std::string(1, line->origin) + text);
      }
      hunks.push_back(std::move(hunk));
    }
  }
  return hunks;
}

namespace {

// Whether `candidate` (symlinks resolved) lies inside `root`: a recorded stack path is data
// from the training host, so `..`, an absolute path or a symlink must not lead the read out
// of the mapped source tree (a frame naming /etc/shadow would put its lines in the result).
bool InsideRoot(const fs::path& candidate, const fs::path& root) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(fs::absolute(candidate), ec);
  if (ec) return false;
  fs::path r = fs::weakly_canonical(fs::absolute(root), ec);
  if (ec) return false;
  auto rel = c.lexically_relative(r);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

SourceLocation LocateSource(const Frame& frame, const LocateOptions& options) {
  SourceLocation loc;
  loc.frame = frame;
  std::error_code ec;
  for (const PathMapping& map : options.path_map) {
    if (!map.from.empty() && frame.file.rfind(map.from, 0) == 0) {
      fs::path candidate = fs::path(map.to) / frame.file.substr(map.from.size());
      if (fs::is_regular_file(candidate, ec) && !InsideRoot(candidate, map.to)) {
        loc.notes.push_back("path_map " + map.from + " -> " + map.to + " gives " + candidate.string() +
                            ", which leads outside " + map.to + "; not read");
        continue;
      }
      if (fs::is_regular_file(candidate, ec)) {
        loc.local = candidate;
        loc.mapped_by = "path_map";
        break;
      }
      loc.notes.push_back("path_map " + map.from + " -> " + map.to + " gives " + candidate.string() +
                          ", which does not exist");
    }
  }
  if (!loc.local && !options.worktree.empty()) {
    auto parts = Components(frame.file);
    for (size_t keep = parts.size(); keep >= 1 && !loc.local; --keep) {
      fs::path candidate = options.worktree;
      for (size_t i = parts.size() - keep; i < parts.size(); ++i) candidate /= parts[i];
      if (fs::is_regular_file(candidate, ec) && InsideRoot(candidate, options.worktree)) {
        loc.local = candidate;
        loc.mapped_by = "suffix";
      }
    }
    if (!loc.local) loc.notes.push_back("no file under " + options.worktree.string() + " ends with any suffix of " + frame.file);
  }
  // As recorded, only when that is inside the source tree given (the run was local).
  if (!loc.local && fs::is_regular_file(frame.file, ec)) {
    bool inside = !options.worktree.empty() && InsideRoot(frame.file, options.worktree);
    for (const PathMapping& map : options.path_map) inside = inside || InsideRoot(frame.file, map.to);
    if (inside) {
      loc.local = frame.file;
      loc.mapped_by = "as_is";
    } else {
      loc.notes.push_back(frame.file + " lies outside the worktree and the path_map targets; not read");
    }
  }
  if (!loc.local) {
    if (options.worktree.empty() && options.path_map.empty()) {
      loc.notes.push_back("no worktree or path_map given: cannot find " + frame.file + " locally");
    }
    return loc;
  }
  loc.line_text = ReadLine(*loc.local, frame.line);
  if (!loc.line_text) {
    loc.notes.push_back(loc.local->string() + " has no line " + std::to_string(frame.line));
  } else if (!frame.code.empty()) {
    loc.matches_recorded = Trim(*loc.line_text) == Trim(frame.code);
    if (!*loc.matches_recorded) {
      loc.notes.push_back("the local line differs from the code msprobe recorded: the local file is not the code "
                          "that ran (another commit?)");
    }
  }

  if (options.baseline_ref.empty()) {
    loc.notes.push_back("no baseline commit given: the git hunk was not looked up");
    return loc;
  }
  fs::path repo_path = options.repo.empty() ? (options.worktree.empty() ? loc.local->parent_path() : options.worktree)
                                            : options.repo;
  auto repo = git::OpenRepository(repo_path);
  if (!repo.ok()) {
    loc.notes.push_back("git: " + repo.status().message());
    return loc;
  }
  fs::path local_abs = fs::weakly_canonical(*loc.local, ec);
  fs::path workdir = git::WorkdirOf(repo->get());
  std::optional<fs::path> relative = RelativeInside(local_abs, workdir);
  if (!relative) {
    // The file may be in a linked worktree of the repository (git worktree add, parity's own
    // worktrees): open the worktree, which shares the repository's objects and refs.
    auto owner = git::OpenRepository(local_abs.parent_path());
    if (owner.ok() && SameCommonDir(repo->get(), owner->get())) {
      fs::path linked = git::WorkdirOf(owner->get());
      if (auto inside = RelativeInside(local_abs, linked)) {
        workdir = linked;
        relative = inside;
      }
    }
  }
  if (!relative) {
    loc.notes.push_back(loc.local->string() + " is not inside the repository " + workdir.string() +
                        " nor in one of its linked worktrees");
    return loc;
  }
  std::string candidate_ref = options.candidate_ref.empty() ? "HEAD" : options.candidate_ref;
  auto hunks = DiffHunks(workdir, options.baseline_ref, candidate_ref, relative->generic_string());
  if (!hunks.ok()) {
    loc.notes.push_back("git: " + hunks.status().message());
    return loc;
  }
  loc.git_checked = true;
  for (const Hunk& h : *hunks) {
    int first = h.new_start, last = h.new_start + h.new_lines - 1;
    bool covers = h.new_lines > 0 ? (frame.line >= first && frame.line <= last)
                                  : (frame.line == h.new_start || frame.line == h.new_start + 1);
    if (covers) {
      loc.hunk = h;
      break;
    }
  }
  if (!loc.hunk) {
    loc.notes.push_back("line " + std::to_string(frame.line) + " of " + relative->generic_string() + " is not in a hunk changed between " +
                        options.baseline_ref + " and " + candidate_ref + " (" + std::to_string(hunks->size()) +
                        " hunk(s) changed in that file)");
  }
  return loc;
}

json ToJson(const Hunk& hunk) {
  return {{"file", hunk.file},           {"old_start", hunk.old_start}, {"old_lines", hunk.old_lines},
          {"new_start", hunk.new_start}, {"new_lines", hunk.new_lines}, {"header", hunk.header},
          {"lines", hunk.lines}};
}

json ToJson(const SourceLocation& loc) {
  json out = {{"recorded_file", loc.frame.file},
              {"line", loc.frame.line},
              {"function", loc.frame.function},
              {"recorded_code", loc.frame.code}};
  out["local_file"] = loc.local ? json(loc.local->string()) : json(nullptr);
  out["mapped_by"] = loc.local ? json(loc.mapped_by) : json(nullptr);
  out["line_text"] = loc.line_text ? json(*loc.line_text) : json(nullptr);
  out["matches_recorded"] = loc.matches_recorded ? json(*loc.matches_recorded) : json(nullptr);
  out["git_checked"] = loc.git_checked;
  out["in_changed_hunk"] = loc.git_checked ? json(loc.hunk.has_value()) : json(nullptr);
  out["hunk"] = loc.hunk ? ToJson(*loc.hunk) : json(nullptr);
  out["notes"] = loc.notes;
  return out;
}

}  // namespace parity::msprobe
