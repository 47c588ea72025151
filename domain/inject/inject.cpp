#include "domain/inject/inject.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>

#include "domain/git/git_handle.h"
#include "domain/git/worktrees.h"
#include "domain/inject/embedded_python.h"
#include "support/subprocess.h"
#include "support/file_read.h"
#include "support/json_document.h"
#include "support/safe_file.h"

namespace parity::inject {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kStateDir = ".parity_inject";
constexpr const char* kHelper = "_parity_probe.py";
constexpr uint64_t kMaxSourceBytes = 64 << 20;

// Every write lands inside the worktree, through no symlink (support/safe_file.h); a
// rewritten source keeps its permissions (an executable script stays executable).
Status WriteInside(const fs::path& worktree, const std::string& rel, const std::string& bytes, mode_t mode = 0644) {
  WriteOptions o;
  o.mode = mode;
  o.keep_mode = mode != kRecordMode;
  return WriteFileUnder(worktree, rel, bytes, o);
}

// The target's path relative to the worktree ('/'-separated); refuses paths outside it.
Result<std::string> RelativeInside(const fs::path& worktree, const std::string& file) {
  fs::path p = fs::path(file).is_absolute() ? fs::path(file) : worktree / file;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(p, ec);
  fs::path root = fs::weakly_canonical(worktree, ec);
  fs::path rel = canonical.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") {
    return InvalidArgument(file + " is not inside the worktree " + worktree.string());
  }
  if (!fs::is_regular_file(canonical, ec)) return NotFound(canonical.string() + ": no such file");
  return rel.generic_string();
}

// The target's structure and the ast's own choice (ast_analyzer.py).
Result<json> RunAstSkeleton(const Options& options, const fs::path& file, const Target& target) {
  json request = {{"file", file.string()}};
  if (target.function) request["function"] = *target.function;
  if (target.line) request["line"] = *target.line;
  if (target.enclosing_function) request["enclosing_function"] = true;
  ProcessOptions p;
  p.argv = {options.python, "-c", embedded::kAstAnalyzer};
  p.stdin_data = request.dump();
  p.timeout = std::chrono::seconds(60);
  p.output_cap = 16 << 20;
  p.cancel = options.cancel;
  auto run = RunProcess(p);
  if (!run.ok()) return std::move(run).take_status().Context("running the Python ast analyser (" + options.python + ")");
  if (!run->success()) return ProcessFailure("the Python ast analyser", p, *run);
  json out = json::parse(run->out, nullptr, false);
  if (!out.is_object()) {
    return Internal("the ast analyser printed no JSON").WithEvidence("output", LastLines(run->out));
  }
  if (out.contains("error")) {
    return NotFound(file.string() + ": " + out["error"].get<std::string>())
        .WithHint("check the line or function name against the worktree's code");
  }
  return out;
}

std::string Quote(const std::string& s) { return json(s).dump(); }  // a valid Python string literal

struct Edit {
  int line = 0;          // 1-based line of the original file
  enum Kind { kWrap, kInsertBefore } kind = kInsertBefore;
  std::vector<std::string> lines;  // kInsertBefore
  int col = 0, end_line = 0, end_col = 0;  // kWrap (byte offsets, as Python's ast gives)
  std::string prefix, suffix;
};

std::string ProbeCall(const std::string& id, const std::string& site, const std::string& when,
                      const std::string& name, const std::string& expr) {
  return "_pp.probe(" + Quote(id) + ", " + Quote(site) + ", " + Quote(when) + ", " + Quote(name) + ", " + expr + ")";
}

// Wraps the returned expression at `r` (ast byte offsets) in a probe call that passes the
// value through.
Edit WrapReturnValue(const json& r, const std::string& id, const std::string& site, const std::string& when) {
  Edit wrap;
  wrap.kind = Edit::kWrap;
  wrap.line = r["line"];
  wrap.col = r["col"];
  wrap.end_line = r["end_line"];
  wrap.end_col = r["end_col"];
  wrap.prefix = "_pp.probe(" + Quote(id) + ", " + Quote(site) + ", " + Quote(when) + ", \"return\", (";
  wrap.suffix = "))";
  return wrap;
}

// The edits and the probe list for one analysed target.
void PlanEdits(const json& a, const std::string& rel, const std::string& id_prefix, std::vector<Edit>& edits,
               json& probes) {
  int n = 0;
  auto next_id = [&] { return id_prefix + "." + std::to_string(++n); };
  if (a["kind"] == "function") {
    int body = a["body_line"].get<int>();
    std::string indent = a["body_indent"].get<std::string>();
    Edit entry;
    entry.line = body;
    for (const auto& param : a["params"]) {
      std::string id = next_id();
      std::string site = rel + ":" + std::to_string(a["line"].get<int>());
      entry.lines.push_back(indent + ProbeCall(id, site, "entry", param.get<std::string>(), param.get<std::string>()));
      probes.push_back({{"id", id}, {"site", site}, {"when", "entry"}, {"name", param}});
    }
    if (!entry.lines.empty()) edits.push_back(entry);
    for (const auto& r : a["returns"]) {
      std::string id = next_id();
      std::string site = rel + ":" + std::to_string(r["line"].get<int>());
      edits.push_back(WrapReturnValue(r, id, site, "return"));
      probes.push_back({{"id", id}, {"site", site}, {"when", "return"}, {"name", "return"}});
    }
    return;
  }
  int line = a["line"].get<int>();
  std::string site = rel + ":" + std::to_string(line);
  std::string indent = a["indent"].get<std::string>();
  Edit before;
  before.line = line;
  for (const auto& input : a["inputs"]) {
    std::string id = next_id();
    before.lines.push_back(indent + ProbeCall(id, site, "before", input, input));
    probes.push_back({{"id", id}, {"site", site}, {"when", "before"}, {"name", input}});
  }
  if (!before.lines.empty()) edits.push_back(before);
  if (a.contains("return_value")) {
    const json& r = a["return_value"];
    std::string id = next_id();
    edits.push_back(WrapReturnValue(r, id, site, "after"));
    probes.push_back({{"id", id}, {"site", site}, {"when", "after"}, {"name", "return"}});
    return;
  }
  static const std::vector<std::string> kNoFallThrough = {"Raise", "Continue", "Break", "Pass"};
  if (a["outputs"].empty() ||
      std::find(kNoFallThrough.begin(), kNoFallThrough.end(), a["statement"].get<std::string>()) != kNoFallThrough.end()) {
    return;
  }
  Edit after;
  bool into_body = a.value("compound", false);
  after.line = into_body ? a["body_line"].get<int>() : a["end_line"].get<int>() + 1;
  std::string after_indent = into_body ? a["body_indent"].get<std::string>() : indent;
  for (const auto& output : a["outputs"]) {
    std::string id = next_id();
    after.lines.push_back(after_indent + ProbeCall(id, site, "after", output, output));
    probes.push_back({{"id", id}, {"site", site}, {"when", "after"}, {"name", output}});
  }
  edits.push_back(after);
}

// Applies edits to the file's lines, bottom-up so earlier line numbers stay valid.
Result<std::string> ApplyEdits(const std::string& original, std::vector<Edit> edits, const std::string& import_line,
                               int import_at) {
  std::vector<std::string> lines;
  std::string eol = original.find("\r\n") != std::string::npos ? "\r\n" : "\n";
  {
    size_t start = 0;
    while (start < original.size()) {
      size_t nl = original.find('\n', start);
      std::string line = original.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
  bool final_newline = !original.empty() && original.back() == '\n';
  Edit import;
  import.line = import_at;
  import.lines = {import_line};
  edits.push_back(import);
  // Descending line; on the same line an in-line wrap goes before an insertion above it.
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    if (a.line != b.line) return a.line > b.line;
    return a.kind == Edit::kWrap && b.kind != Edit::kWrap;
  });
  for (const Edit& e : edits) {
    if (e.line < 1 || e.line > static_cast<int>(lines.size()) + 1) {
      return InvalidArgument("line " + std::to_string(e.line) + " is outside the file (" + std::to_string(lines.size()) + " lines)");
    }
    if (e.kind == Edit::kWrap) {
      std::string& last = lines[e.end_line - 1];
      if (e.end_col > static_cast<int>(last.size())) return InvalidArgument("return value end is past its line");
      last.insert(static_cast<size_t>(e.end_col), e.suffix);
      std::string& first = lines[e.line - 1];
      if (e.col > static_cast<int>(first.size())) return InvalidArgument("return value start is past its line");
      first.insert(static_cast<size_t>(e.col), e.prefix);
    } else {
      lines.insert(lines.begin() + (e.line - 1), e.lines.begin(), e.lines.end());
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i];
    if (i + 1 < lines.size() || final_newline) out += eol;
  }
  return out;
}

const fs::path kStateFile = fs::path(kStateDir) / "state.json";
fs::path StatePath(const fs::path& worktree) { return worktree / kStateFile; }
fs::path BackupOf(const std::string& rel) { return fs::path(kStateDir) / "orig" / rel; }

// The inject state is data parity wrote earlier, and anything may have changed it since: it
// is read without following symlinks, and a file it names must be a plain relative path
// (no "..", not absolute) that then resolves inside the worktree.
Result<std::optional<json>> ReadState(const fs::path& worktree) {
  auto text = ReadFileUnder(worktree, kStateFile, kMaxSourceBytes);
  if (!text.ok()) {
    if (text.status().kind() == ErrorKind::kNotFound) return std::optional<json>();
    return std::move(text).take_status();
  }
  PARITY_ASSIGN_OR_RETURN(json state, ParseJsonDocument(*text, StatePath(worktree).string()));
  auto bad = [&](const std::string& why) {
    return FailedPrecondition(StatePath(worktree).string() + " is not parity's inject state: " + why)
        .WithHint("parity did not write it as it is; look at it and remove the .parity_inject folder by hand");
  };
  if (!state.is_object() || !state.contains("files") || !state["files"].is_array()) return bad("no files list");
  for (const json& f : state["files"]) {
    for (const char* key : {"path", "sha256_original", "sha256_injected"}) {
      if (!f.is_object() || !f.contains(key) || !f[key].is_string()) return bad(std::string("a file without ") + key);
    }
    std::string rel = f["path"];
    if (!IsPlainRelative(rel) || rel.rfind(kStateDir, 0) == 0) {
      return bad("it names \"" + rel + "\", which is not a path inside the worktree");
    }
  }
  return std::optional<json>(std::move(state));
}

}  // namespace

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Status CheckParityWorktree(const fs::path& worktree) {
  std::error_code ec;
  if (!fs::is_directory(worktree, ec)) return NotFound(worktree.string() + ": no such folder");
  PARITY_ASSIGN_OR_RETURN(git::RepoPtr repo, git::OpenRepository(worktree));
  PARITY_ASSIGN_OR_RETURN(auto worktrees, git::ListWorktrees(repo.get()));
  fs::path want = fs::weakly_canonical(worktree, ec);
  for (const auto& w : worktrees) {
    if (fs::weakly_canonical(w.path, ec) == want) {
      if (w.parity_owned) return Status::Ok();
      return FailedPrecondition(worktree.string() + " is a git worktree parity did not create")
          .WithHint("inject_prints only edits parity's own worktrees (audit_workspace action=prepare makes them)");
    }
  }
  return FailedPrecondition(worktree.string() + " is not a parity worktree (the user's own tree is never edited)")
      .WithHint("create the baseline/candidate worktrees with audit_workspace action=prepare and inject there");
}

Result<json> Analyze(const Options& options) {
  if (options.targets.empty()) return InvalidArgument("no targets");
  std::vector<std::shared_ptr<CodeAnalyser>> chain = options.analysers;
  if (chain.empty()) chain.push_back(MakeAstAnalyser());
  json out = {{"requested", options.requested}, {"python", options.python}, {"attempts", json::array()},
              {"targets", json::array()}};
  std::vector<std::string> deciders;
  std::optional<Status> waiting;  // the first kInputRequired: asked, answered in a later round
  for (size_t index = 0; index < options.targets.size(); ++index) {
    const Target& t = options.targets[index];
    if (options.cancel.cancelled()) return Cancelled();
    if (!t.line && !t.function) return InvalidArgument(t.file + ": a target needs a line or a function");
    PARITY_ASSIGN_OR_RETURN(std::string rel, RelativeInside(options.worktree, t.file));
    PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadFileLimited(options.worktree / rel, kMaxSourceBytes));
    Question question{rel, bytes, rel + (t.line ? ":" + std::to_string(*t.line) : ""), json()};
    if (t.function) question.target = rel + ":" + *t.function;
    if (options.progress) options.progress(index, options.targets.size(), question.target);
    PARITY_ASSIGN_OR_RETURN(question.skeleton, RunAstSkeleton(options, options.worktree / rel, t));
    PARITY_ASSIGN_OR_RETURN(auto decision, Decide(chain, options.fall_back, question, options.cancel, out["attempts"]));
    if (!decision) {
      if (!waiting) waiting = Status(ErrorKind::kInputRequired, "waiting for the client's sampling answers");
      continue;
    }
    if (std::find(deciders.begin(), deciders.end(), decision->analyser) == deciders.end()) {
      deciders.push_back(decision->analyser);
    }
    json item = {{"file", rel}, {"sha256", Sha256Hex(bytes)}, {"analyser", decision->analyser},
                 {"analysis", std::move(decision->analysis)}};
    item["target"] = {{"file", t.file}};
    if (t.line) item["target"]["line"] = *t.line;
    if (t.function) item["target"]["function"] = *t.function;
    if (t.enclosing_function) item["target"]["enclosing_function"] = true;
    out["targets"].push_back(item);
  }
  if (waiting) return *waiting;
  std::string decided;
  for (const auto& d : deciders) decided += (decided.empty() ? "" : "+") + d;
  out["analyser"] = decided;
  return out;
}

Result<json> Inject(const Options& options) {
  PARITY_RETURN_IF_ERROR(CheckParityWorktree(options.worktree));
  PARITY_ASSIGN_OR_RETURN(auto existing, ReadState(options.worktree));
  if (existing) {
    return FailedPrecondition("probes are already injected in " + options.worktree.string())
        .WithHint("call inject_prints action=revert first (action=status lists them)");
  }
  std::error_code ec;
  if (fs::exists(options.worktree / kHelper, ec)) {
    return FailedPrecondition((options.worktree / kHelper).string() + " exists but parity has no record of it")
        .WithHint("remove it by hand if it is a leftover");
  }
  PARITY_ASSIGN_OR_RETURN(json analysis, Analyze(options));

  // Group the targets by file; refuse files that changed since the caller's analysis.
  std::map<std::string, std::vector<const json*>> by_file;
  for (const json& t : analysis["targets"]) by_file[t["file"].get<std::string>()].push_back(&t);
  json files = json::array(), probes = json::array();
  std::map<std::string, std::string> originals, injected;
  int target_index = 0;
  for (const auto& [rel, targets] : by_file) {
    PARITY_ASSIGN_OR_RETURN(std::string original, ReadFileUnder(options.worktree, rel, kMaxSourceBytes));
    std::string sha = Sha256Hex(original);
    auto expected = options.expected_sha256.find(rel);
    if (expected != options.expected_sha256.end() && expected->second != sha) {
      return FailedPrecondition(rel + " changed since it was analysed (sha256 " + sha.substr(0, 12) + ", analysed " +
                                expected->second.substr(0, 12) + ")")
          .WithHint("analyse again, then inject");
    }
    std::vector<Edit> edits;
    int import_at = 1;
    for (const json* t : targets) {
      PlanEdits((*t)["analysis"], rel, "p" + std::to_string(++target_index), edits, probes);
      import_at = (*t)["analysis"]["import_line"].get<int>();
    }
    // The one import: the helper lives at the worktree root, found relative to this file.
    const fs::path parent = fs::path(rel).parent_path();
    std::string up = parent.empty() ? "." : "";
    for (auto it = parent.begin(); it != parent.end(); ++it) up += up.empty() ? ".." : "/..";
    std::string import_line =
        "import sys as _pp_sys, os as _pp_os; _pp_sys.path.insert(0, _pp_os.path.normpath(_pp_os.path.join("
        "_pp_os.path.dirname(_pp_os.path.abspath(__file__)), " + Quote(up) + "))); import _parity_probe as _pp  # parity-probe";
    // Two targets wrapping the same return value would nest their edits; keep the first.
    std::vector<Edit> unique;
    for (const Edit& e : edits) {
      bool duplicate = e.kind == Edit::kWrap && std::any_of(unique.begin(), unique.end(), [&e](const Edit& u) {
        return u.kind == Edit::kWrap && u.line == e.line && u.col == e.col && u.end_line == e.end_line;
      });
      if (!duplicate) unique.push_back(e);
    }
    PARITY_ASSIGN_OR_RETURN(std::string changed, ApplyEdits(original, unique, import_line, import_at));
    originals[rel] = original;
    injected[rel] = changed;
  }
  // Record first (originals saved), then write: a crash in between leaves a revertible state.
  json state = {{"schema", "parity.inject/1"}, {"helper", kHelper}, {"rank", options.rank},
                {"calls", options.calls}, {"python", options.python}, {"probes", probes},
                {"analysis", analysis}, {"files", json::array()}};
  for (const auto& [rel, original] : originals) {
    PARITY_RETURN_IF_ERROR(WriteInside(options.worktree, BackupOf(rel).string(), original, kRecordMode));
    state["files"].push_back({{"path", rel}, {"sha256_original", Sha256Hex(original)},
                              {"sha256_injected", Sha256Hex(injected[rel])},
                              {"backup", BackupOf(rel).generic_string()}});
  }
  PARITY_RETURN_IF_ERROR(WriteInside(options.worktree, kStateFile.string(), state.dump(2) + "\n", kRecordMode));
  std::string helper = embedded::kProbeHelper;
  auto replace = [&helper](const std::string& key, const std::string& value) {
    size_t at = helper.find(key);
    if (at != std::string::npos) helper.replace(at, key.size(), value);
  };
  replace("__PARITY_RANK__", std::to_string(options.rank));
  replace("__PARITY_CALLS__", options.calls.empty() ? "None" : json(options.calls).dump());
  PARITY_RETURN_IF_ERROR(WriteInside(options.worktree, kHelper, helper));
  for (const auto& [rel, bytes] : injected) PARITY_RETURN_IF_ERROR(WriteInside(options.worktree, rel, bytes));
  return json{{"injected", true}, {"worktree", options.worktree.string()}, {"helper", kHelper},
              {"analyser", analysis["analyser"]}, {"files", state["files"]}, {"probes", probes}, {"analysis", analysis}};
}

Result<json> Revert(const fs::path& worktree, bool force) {
  PARITY_RETURN_IF_ERROR(CheckParityWorktree(worktree));
  PARITY_ASSIGN_OR_RETURN(auto state, ReadState(worktree));
  if (!state) return json{{"reverted", false}, {"message", "nothing is injected in " + worktree.string()}};
  // Check everything before touching anything. The backup is where parity puts it, whatever
  // the state says.
  std::vector<std::pair<std::string, std::string>> restores;
  json files = json::array();
  for (const json& f : (*state)["files"]) {
    std::string rel = f["path"];
    PARITY_ASSIGN_OR_RETURN(std::string backup, ReadFileUnder(worktree, BackupOf(rel), kMaxSourceBytes));
    if (Sha256Hex(backup) != f["sha256_original"]) {
      return FailedPrecondition("the saved original of " + rel + " does not match its recorded hash; not reverting");
    }
    auto current = ReadFileUnder(worktree, rel, kMaxSourceBytes);
    if (!current.ok() && current.status().kind() != ErrorKind::kNotFound) return std::move(current).take_status();
    std::string current_sha = current.ok() ? Sha256Hex(*current) : "missing";
    if (current_sha != f["sha256_injected"] && current_sha != f["sha256_original"] && !force) {
      return FailedPrecondition(rel + " changed after the probes were injected; reverting would discard that change")
          .WithHint("pass force=true to restore the original anyway");
    }
    restores.emplace_back(rel, std::move(backup));
    files.push_back({{"path", rel}, {"sha256", f["sha256_original"]}});
  }
  for (const auto& [rel, bytes] : restores) {
    PARITY_RETURN_IF_ERROR(WriteInside(worktree, rel, bytes));
    PARITY_ASSIGN_OR_RETURN(std::string check, ReadFileUnder(worktree, rel, kMaxSourceBytes));
    if (Sha256Hex(check) != Sha256Hex(bytes)) return Internal((worktree / rel).string() + " does not read back as its original bytes");
  }
  PARITY_RETURN_IF_ERROR(RemoveUnder(worktree, kHelper));
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(worktree / "__pycache__", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("_parity_probe.", 0) == 0) PARITY_RETURN_IF_ERROR(RemoveUnder(worktree, fs::path("__pycache__") / name));
  }
  PARITY_RETURN_IF_ERROR(RemoveUnder(worktree, kStateDir));
  return json{{"reverted", true}, {"files", files}, {"verified", "sha256 of every restored file equals its original"}};
}

Result<json> InjectStatus(const fs::path& worktree) {
  PARITY_RETURN_IF_ERROR(CheckParityWorktree(worktree));
  PARITY_ASSIGN_OR_RETURN(auto state, ReadState(worktree));
  if (!state) return json{{"injected", false}};
  json files = json::array();
  for (const json& f : (*state)["files"]) {
    auto current = ReadFileUnder(worktree, f["path"].get<std::string>(), kMaxSourceBytes);
    std::string sha = current.ok() ? Sha256Hex(*current) : "missing";
    files.push_back({{"path", f["path"]}, {"state", sha == f["sha256_injected"]   ? "injected"
                                                    : sha == f["sha256_original"] ? "original"
                                                                                  : "changed since injection"}});
  }
  return json{{"injected", true}, {"helper", (*state)["helper"]}, {"rank", (*state)["rank"]},
              {"calls", (*state)["calls"]}, {"files", files}, {"probes", (*state)["probes"]}};
}

}  // namespace parity::inject
