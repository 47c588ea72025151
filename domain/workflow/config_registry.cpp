#include "domain/workflow/config_registry.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "domain/git/git_handle.h"

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxFiles = 2000;
constexpr size_t kMaxFileBytes = 1 << 20;
constexpr size_t kMaxTotalBytes = size_t{32} << 20;

// A python token, enough to find module-level assignments, dict keys and call arguments.
struct Tok {
  enum Kind { kName, kString, kPunct, kOther } kind;
  std::string text;  // a string's contents (no quotes, escapes left as written)
  int depth;         // bracket depth the token sits at (an opener: the depth outside it)
  bool line_start;   // first token of a logical line at column 0
};

std::vector<Tok> Lex(const std::string& s) {
  std::vector<Tok> out;
  int depth = 0;
  bool at_line_start = true;  // no token yet on this logical line
  bool column0 = true;        // the current physical line has no indentation so far
  size_t i = 0;
  auto push = [&](Tok::Kind k, std::string text, int d, bool starts) {
    out.push_back({k, std::move(text), d, starts});
    at_line_start = false;
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      if (depth == 0) at_line_start = true;
      column0 = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
      column0 = false;
      ++i;
      continue;
    }
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {  // line continuation
      i += 2;
      column0 = false;
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    const bool starts = at_line_start && column0 && depth == 0;
    // A string, with an optional prefix (r, b, f, u, rb, ...): identifiers are read whole,
    // so a letter here starts a token.
    size_t q = i;
    while (q < s.size() && q - i < 2 && s[q] != '\0' && std::strchr("rRbBfFuU", s[q]) != nullptr) ++q;
    if (q < s.size() && (s[q] == '"' || s[q] == '\'')) {
      const char quote = s[q];
      const bool triple = q + 2 < s.size() && s[q + 1] == quote && s[q + 2] == quote;
      size_t j = q + (triple ? 3 : 1);
      std::string text;
      while (j < s.size()) {
        if (s[j] == '\\' && j + 1 < s.size()) {
          text += s.substr(j, 2);
          j += 2;
          continue;
        }
        if (triple ? s.compare(j, 3, std::string(3, quote)) == 0 : s[j] == quote) break;
        if (!triple && s[j] == '\n') break;  // unterminated: it ends with its line
        text += s[j++];
      }
      i = std::min(s.size(), j + (triple ? 3 : 1));
      push(Tok::kString, std::move(text), depth, starts);
      column0 = false;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      push(Tok::kName, s.substr(i, j - i), depth, starts);
      i = j;
      column0 = false;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.' || s[j] == '_')) ++j;
      push(Tok::kOther, s.substr(i, j - i), depth, starts);
      i = j;
      column0 = false;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      push(Tok::kPunct, std::string(1, c), depth, starts);
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      depth = std::max(0, depth - 1);
      push(Tok::kPunct, std::string(1, c), depth, starts);
    } else {
      push(Tok::kPunct, std::string(1, c), depth, starts);
    }
    column0 = false;
    ++i;
  }
  return out;
}

bool Is(const std::vector<Tok>& t, size_t i, const char* punct) {
  return i < t.size() && t[i].kind == Tok::kPunct && t[i].text == punct;
}

// The index just past the bracket opened at `open`.
size_t PastClose(const std::vector<Tok>& t, size_t open) {
  size_t i = open + 1;
  while (i < t.size() && !(t[i].kind == Tok::kPunct && t[i].depth == t[open].depth &&
                           (t[i].text == ")" || t[i].text == "]" || t[i].text == "}"))) {
    ++i;
  }
  return i + 1;
}

struct DictLiteral {
  std::vector<std::string> keys;                                 // "key": ...
  std::map<std::string, std::vector<std::string>> nested;       // "key": {"inner": ...}
  std::map<std::string, std::string> references;                // "key": identifier
};

// The dict literal opened at `open`: its string keys and what kind of value each has.
DictLiteral ReadDict(const std::vector<Tok>& t, size_t open) {
  DictLiteral d;
  const int inside = t[open].depth + 1;
  size_t end = PastClose(t, open);
  for (size_t i = open + 1; i + 1 < end; ++i) {
    if (t[i].depth != inside || t[i].kind != Tok::kString || !Is(t, i + 1, ":")) continue;
    const std::string key = t[i].text;
    d.keys.push_back(key);
    size_t v = i + 2;
    if (Is(t, v, "{")) {
      auto& inner = d.nested[key];
      for (size_t k = v + 1, e = PastClose(t, v); k + 1 < e; ++k) {
        if (t[k].depth == inside + 1 && t[k].kind == Tok::kString && Is(t, k + 1, ":")) inner.push_back(t[k].text);
      }
    } else if (v < t.size() && t[v].kind == Tok::kName && (Is(t, v + 1, ",") || Is(t, v + 1, "}"))) {
      d.references[key] = t[v].text;
    }
  }
  return d;
}

bool FlavorDictName(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* suffix : {"configs", "args", "flavors"}) {
    std::string s = suffix;
    if (lower.size() >= s.size() && lower.compare(lower.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

// "a/models/llama3/x/y.py" -> "llama3": the folder right under the nearest `models/`.
std::string ModelFolderOf(const std::string& path) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t slash = path.find('/', start);
    parts.push_back(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  for (size_t i = parts.size(); i-- > 0;) {
    if (parts[i] == "models" && i + 2 < parts.size()) return parts[i + 1];
  }
  return "";
}

std::string Stem(const std::string& path) {
  std::string name = path.substr(path.rfind('/') + 1);
  return name.substr(0, name.rfind('.'));
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// `[model]` ... `name = "x"` of a TOML job file.
std::string TomlModelName(const std::string& text) {
  std::string section;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    line = line.substr(b);
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') == std::string::npos ? std::string::npos : line.find(']') - 1);
      continue;
    }
    if (section != "model" || line.rfind("name", 0) != 0) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos || line.find_first_not_of(" \t", 4) != eq) continue;
    size_t q = line.find_first_of("\"'", eq);
    if (q == std::string::npos) continue;
    size_t close = line.find(line[q], q + 1);
    if (close != std::string::npos) return line.substr(q + 1, close - q - 1);
  }
  return "";
}

}  // namespace

std::vector<std::string> TopLevelFunctions(const std::string& text) {
  std::vector<std::string> names;
  std::vector<Tok> t = Lex(text);
  for (size_t i = 0; i + 2 < t.size(); ++i) {
    if (t[i].line_start && t[i].kind == Tok::kName && t[i].text == "def" && t[i + 1].kind == Tok::kName &&
        Is(t, i + 2, "(") && t[i + 1].text[0] != '_') {
      names.push_back(t[i + 1].text);
    }
  }
  return names;
}

std::vector<std::string> TreeRegistry::ConfigsOf(const std::string& model) const {
  std::vector<std::string> out;
  for (const auto& [m, list] : configs) {
    if (!model.empty() && m != model && !m.empty()) continue;
    for (const auto& c : list) {
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string> TreeRegistry::Models() const {
  std::vector<std::string> out;
  for (const auto& [m, list] : configs) {
    if (!m.empty()) out.push_back(m);
  }
  return out;
}

bool MayRegister(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  if (name == "config_registry.py") return true;
  if (EndsWith(name, ".toml")) return path.find("train_configs/") != std::string::npos;
  // Any python file in or under a `models/` folder (models/__init__.py may name the dicts).
  return EndsWith(name, ".py") && (path.rfind("models/", 0) == 0 || path.find("/models/") != std::string::npos);
}

void RegistryParser::AddConfig(const std::string& model, const std::string& config) {
  auto& list = out_.configs[model];
  if (std::find(list.begin(), list.end(), config) == list.end()) list.push_back(config);
}

void RegistryParser::Add(const std::string& path, const std::string& text) {
  const std::string folder = ModelFolderOf(path);
  const std::string name = path.substr(path.rfind('/') + 1);
  bool registers = false;
  if (EndsWith(name, ".toml")) {
    std::string model = TomlModelName(text);
    AddConfig(model.empty() ? folder : model, Stem(path));
    out_.sources.push_back(path);
    return;
  }
  if (name == "config_registry.py") {
    // torchtitan: models/<M>/config_registry.py, one public function per config.
    const fs::path p(path);
    if (p.parent_path().parent_path().filename() == "models") {
      out_.configs[p.parent_path().filename().string()];
      for (const auto& f : TopLevelFunctions(text)) AddConfig(p.parent_path().filename().string(), f);
    }
    registers = true;
  }
  std::vector<Tok> t = Lex(text);
  for (size_t i = 0; i < t.size(); ++i) {
    // NAME = {...} or NAME: type = {...} at module level.
    if (t[i].line_start && t[i].kind == Tok::kName) {
      size_t j = i + 1;
      if (Is(t, j, ":")) {
        while (j < t.size() && !(t[j].depth == 0 && (Is(t, j, "=") || t[j].line_start))) ++j;
      }
      if (Is(t, j, "=") && Is(t, j + 1, "{")) {
        DictLiteral d = ReadDict(t, j + 1);
        const std::string& ident = t[i].text;
        if (!d.nested.empty() && (ident == "MODULES" || FlavorDictName(ident) || name == "config_registry.py")) {
          for (const auto& [model, configs] : d.nested) {
            out_.configs[model];
            for (const auto& c : configs) AddConfig(model, c);
          }
          registers = true;
        }
        for (const auto& [model, dict] : d.references) refs_.push_back({model, dict, path});
        if (d.nested.empty() && d.references.empty() && FlavorDictName(ident) && !d.keys.empty()) {
          dicts_.push_back({path, ident, d.keys});
        }
        if (!d.references.empty()) registers = true;
      }
      // NAME["key"] = ...: a flavor added to a dict.
      if (Is(t, i + 1, "[") && i + 4 < t.size() && t[i + 2].kind == Tok::kString && Is(t, i + 3, "]") &&
          Is(t, i + 4, "=") && FlavorDictName(t[i].text)) {
        dicts_.push_back({path, t[i].text, {t[i + 2].text}});
      }
    }
    // TrainSpec(name="llama3", ..., model_args=llama3_configs, ...)
    if (t[i].kind == Tok::kName && t[i].text == "TrainSpec" && Is(t, i + 1, "(")) {
      std::string spec_name, args;
      const int inside = t[i + 1].depth + 1;
      for (size_t k = i + 2, e = PastClose(t, i + 1); k + 2 < e; ++k) {
        if (t[k].depth != inside || t[k].kind != Tok::kName || !Is(t, k + 1, "=")) continue;
        if (t[k].text == "name" && t[k + 2].kind == Tok::kString) spec_name = t[k + 2].text;
        if (t[k].text == "model_args" && t[k + 2].kind == Tok::kName) args = t[k + 2].text;
      }
      if (!args.empty()) refs_.push_back({spec_name, args, path});
      registers = true;
    }
  }
  if (registers || std::any_of(dicts_.begin(), dicts_.end(), [&](const Dict& d) { return d.file == path; })) {
    out_.sources.push_back(path);
  }
}

TreeRegistry RegistryParser::Finish() {
  std::set<std::string> consumed;  // dicts a model name was given to
  for (const auto& ref : refs_) {
    const std::string model = ref.model.empty() ? ModelFolderOf(ref.file) : ref.model;
    if (model.empty()) continue;
    for (const auto& d : dicts_) {
      if (d.name != ref.dict) continue;
      out_.configs[model];
      for (const auto& k : d.keys) AddConfig(model, k);
      if (!ref.model.empty()) consumed.insert(d.name);
    }
  }
  for (const auto& d : dicts_) {
    const std::string folder = ModelFolderOf(d.file);
    if (consumed.count(d.name) || folder.empty()) continue;
    for (const auto& k : d.keys) AddConfig(folder, k);
  }
  TreeRegistry out = std::move(out_);
  out_ = {};
  dicts_.clear();
  refs_.clear();
  return out;
}

Result<TreeRegistry> ReadTreeRegistry(const fs::path& repo_path, const std::string& commit) {
  PARITY_ASSIGN_OR_RETURN(git::RepoPtr repo, git::OpenRepository(repo_path));
  git_object* raw = nullptr;
  if (int rc = git_revparse_single(&raw, repo.get(), (commit + "^{tree}").c_str()); rc < 0) {
    return git::GitError(rc, "reading the tree of " + commit + " in " + repo_path.string());
  }
  git::ObjectPtr tree(raw);
  struct Walk {
    std::set<std::string>* paths;
    std::vector<std::pair<std::string, git_oid>> wanted;
  } walk{nullptr, {}};
  TreeRegistry files;
  walk.paths = &files.paths;
  auto callback = [](const char* root, const git_tree_entry* entry, void* payload) -> int {
    auto* w = static_cast<Walk*>(payload);
    if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB) return 0;
    std::string path = std::string(root) + git_tree_entry_name(entry);
    if (MayRegister(path) && w->wanted.size() < kMaxFiles) w->wanted.push_back({path, *git_tree_entry_id(entry)});
    w->paths->insert(std::move(path));
    return 0;
  };
  if (int rc = git_tree_walk(reinterpret_cast<git_tree*>(tree.get()), GIT_TREEWALK_PRE, callback, &walk); rc < 0) {
    return git::GitError(rc, "walking the tree of " + commit);
  }
  RegistryParser parser;
  size_t total = 0;
  for (const auto& [path, oid] : walk.wanted) {
    git_blob* raw_blob = nullptr;
    if (int rc = git_blob_lookup(&raw_blob, repo.get(), &oid); rc < 0) return git::GitError(rc, "reading " + path);
    git::BlobPtr blob(raw_blob);
    const size_t size = static_cast<size_t>(git_blob_rawsize(blob.get()));
    if (size > kMaxFileBytes || total + size > kMaxTotalBytes) continue;
    total += size;
    parser.Add(path, std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())), size));
  }
  TreeRegistry out = parser.Finish();
  out.paths = std::move(files.paths);
  out.commit = commit;
  return out;
}

}  // namespace parity::workflow
