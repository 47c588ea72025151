#include "domain/msprobe/value_trace.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include "support/file_read.h"

namespace parity::msprobe {

namespace fs = std::filesystem;
using json = nlohmann::json;

Result<std::vector<Hunk>> AllDiffHunks(const fs::path& repo, const std::string& old_ref, const std::string& new_ref) {
  return DiffHunks(repo, old_ref, new_ref, "");
}

namespace {

constexpr size_t kMaxFiles = 2000;
constexpr size_t kMaxFileBytes = size_t{4} << 20;
constexpr int kMaxDepth = 6;

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool IdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Dotted names on a line of Python ("self.eps", "cfg.norm_eps", "x"), strings and comments skipped.
std::vector<std::string> DottedNames(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '#') break;
    if (c == '"' || c == '\'') {
      size_t close = line.find(c, i + 1);
      i = close == std::string_view::npos ? line.size() : close + 1;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {  // a number: 1e-6 holds no name
      while (i < line.size() && (IdentChar(line[i]) || line[i] == '.')) ++i;
      continue;
    }
    if (!IdentStart(c) || (i > 0 && line[i - 1] == '.')) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < line.size() && (IdentChar(line[i]) || (line[i] == '.' && i + 1 < line.size() && IdentStart(line[i + 1])))) ++i;
    out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

std::string LastPart(const std::string& dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

bool HasWord(std::string_view text, std::string_view word) {
  for (size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    bool left = at == 0 || !IdentChar(text[at - 1]);
    bool right = at + word.size() >= text.size() || !IdentChar(text[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// Numbers written on a line (Python literals: 1e-6, 0.5, 10_000), as doubles.
std::vector<double> Numbers(std::string_view line) {
  std::vector<double> out;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    bool starts = std::isdigit(static_cast<unsigned char>(c)) ||
                  (c == '.' && i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1])));
    if (!starts || (i > 0 && (IdentChar(line[i - 1]) || line[i - 1] == '.'))) {
      ++i;
      continue;
    }
    std::string token;
    while (i < line.size()) {
      char d = line[i];
      bool exponent_sign = (d == '-' || d == '+') && !token.empty() && (token.back() == 'e' || token.back() == 'E');
      if (!(std::isdigit(static_cast<unsigned char>(d)) || d == '.' || d == 'e' || d == 'E' || d == '_' || exponent_sign)) break;
      if (d != '_') token += d;
      ++i;
    }
    char* end = nullptr;
    double v = std::strtod(token.c_str(), &end);
    if (end && *end == '\0') out.push_back(v);
  }
  return out;
}

struct Source {
  std::string rel;                 // relative to the worktree
  std::vector<std::string> lines;  // 0-based
};

class Code {
 public:
  explicit Code(const fs::path& worktree) : root_(worktree) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(worktree, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& p = it->path();
      if (it->is_directory(ec)) {
        std::string name = p.filename().string();
        if (name == ".git" || name == "__pycache__" || name == ".parity_inject" || name == "node_modules") {
          it.disable_recursion_pending();
        }
        continue;
      }
      if (p.extension() != ".py" || !it->is_regular_file(ec)) continue;
      if (files_.size() >= kMaxFiles) {
        truncated_ = true;
        break;
      }
      auto text = ReadFileLimited(p, kMaxFileBytes);
      if (!text.ok()) continue;
      Source src;
      src.rel = p.lexically_relative(worktree).generic_string();
      size_t start = 0;
      while (start <= text->size()) {
        size_t nl = text->find('\n', start);
        src.lines.push_back(text->substr(start, nl == std::string::npos ? std::string::npos : nl - start));
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
      files_.push_back(std::move(src));
    }
    // The divergent file is searched first, then the others in path order.
    std::sort(files_.begin(), files_.end(), [](const Source& a, const Source& b) { return a.rel < b.rel; });
  }
  const std::vector<Source>& files() const { return files_; }
  bool truncated() const { return truncated_; }
  const Source* Find(const std::string& rel) const {
    for (const Source& s : files_) {
      if (s.rel == rel) return &s;
    }
    return nullptr;
  }

 private:
  fs::path root_;
  std::vector<Source> files_;
  bool truncated_ = false;
};

// An assignment of `attr` on a line: `self.attr = rhs`, `attr = rhs`, `attr: T = rhs`,
// `register_buffer("attr", rhs`, `setattr(self, "attr", rhs`. Returns rhs.
std::optional<std::string> AssignedBy(const std::string& raw, const std::string& attr) {
  std::string line = Trim(raw);
  for (const std::string& lead : {"self." + attr, attr}) {
    if (line.rfind(lead, 0) != 0) continue;
    std::string rest = Trim(line.substr(lead.size()));
    if (!rest.empty() && rest[0] == ':') {  // annotated: attr: T = rhs
      size_t eq = rest.find('=');
      if (eq == std::string::npos || (eq + 1 < rest.size() && rest[eq + 1] == '=')) continue;
      return Trim(rest.substr(eq + 1));
    }
    if (rest.size() >= 2 && rest[0] == '=' && rest[1] != '=') return Trim(rest.substr(1));
  }
  for (const char* call : {"register_buffer(", "register_parameter(", "setattr(self,"}) {
    size_t at = line.find(call);
    if (at == std::string::npos) continue;
    std::string rest = Trim(line.substr(at + std::string(call).size()));
    for (char q : {'"', '\''}) {
      std::string quoted = std::string(1, q) + attr + q;
      if (rest.rfind(quoted, 0) == 0) {
        std::string after = Trim(rest.substr(quoted.size()));
        if (!after.empty() && after[0] == ',') return Trim(after.substr(1));
      }
    }
  }
  return std::nullopt;
}

// The enclosing `def` and `class` of line `index` (0-based), by indentation.
struct Scope {
  std::optional<size_t> def_line, class_line;
  std::string class_name;
  std::vector<std::string> params;  // the def's parameters, self excluded
};

size_t Indent(const std::string& s) {
  size_t n = 0;
  while (n < s.size() && (s[n] == ' ' || s[n] == '\t')) ++n;
  return n;
}

Scope ScopeOf(const Source& src, size_t index) {
  Scope scope;
  size_t indent = Indent(src.lines[index]);
  for (size_t i = index; i-- > 0;) {
    const std::string& l = src.lines[i];
    std::string t = Trim(l);
    if (t.empty() || t[0] == '#') continue;
    size_t in = Indent(l);
    if (in >= indent) continue;
    indent = in;
    if (!scope.def_line && t.rfind("def ", 0) == 0) {
      scope.def_line = i;
      size_t open = t.find('('), close = t.rfind(')');
      if (open != std::string::npos && close != std::string::npos && close > open) {
        std::string list = t.substr(open + 1, close - open - 1);
        size_t start = 0;
        while (start <= list.size()) {
          size_t comma = list.find(',', start);
          std::string p = Trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
          p = Trim(p.substr(0, p.find_first_of(":=")));
          if (!p.empty() && p != "self" && p != "*") scope.params.push_back(p);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      }
    } else if (t.rfind("class ", 0) == 0) {
      scope.class_line = i;
      size_t end = t.find_first_of("(:", 6);
      scope.class_name = Trim(t.substr(6, end == std::string::npos ? std::string::npos : end - 6));
      break;
    }
  }
  return scope;
}

// The arguments of the first call `name(` on a line, split at top-level commas.
std::optional<std::vector<std::string>> CallArguments(const std::string& line, const std::string& name) {
  size_t at = 0;
  while ((at = line.find(name + "(", at)) != std::string::npos) {
    if (at == 0 || !IdentChar(line[at - 1])) break;
    at += name.size();
  }
  if (at == std::string::npos) return std::nullopt;
  std::vector<std::string> args;
  std::string current;
  int depth = 0;
  for (size_t i = at + name.size() + 1; i < line.size(); ++i) {
    char c = line[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) {
        if (!Trim(current).empty()) args.push_back(Trim(current));
        return args;
      }
      --depth;
    }
    if (c == ',' && depth == 0) {
      args.push_back(Trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  return std::nullopt;  // the call goes on over more lines
}

struct Follow {
  std::string name;  // an attribute or variable name to find the assignment of
  int depth = 0;
  int parent = -1;   // the step it came from
};

std::string ValueMatchReason(const Hunk& h, const std::vector<std::pair<std::string, std::string>>& values,
                             int* strength) {
  std::string reason;
  *strength = 0;
  for (const auto& [cand, base] : values) {
    const char* end_c = nullptr;
    char* end = nullptr;
    double cv = std::strtod(cand.c_str(), &end);
    bool c_num = end && *end == '\0' && !cand.empty();
    end_c = nullptr;
    double bv = std::strtod(base.c_str(), &end);
    bool b_num = end && *end == '\0' && !base.empty();
    (void)end_c;
    bool added = false, removed = false;
    for (const std::string& l : h.lines) {
      if (l.empty()) continue;
      std::string_view text(l.data() + 1, l.size() - 1);
      auto holds = [&](bool numeric, double v, const std::string& word) {
        if (numeric) {
          for (double n : Numbers(text)) {
            if (n == v) return true;
          }
          return false;
        }
        std::string bare = word;
        if (bare.rfind("torch.", 0) == 0) bare = bare.substr(6);  // a dtype: float16 is written torch.float16 or float16
        return !bare.empty() && HasWord(text, bare);
      };
      if (l[0] == '+' && holds(c_num, cv, cand)) added = true;
      if (l[0] == '-' && holds(b_num, bv, base)) removed = true;
    }
    if (added) reason += (reason.empty() ? "" : "; ") + std::string("an added line holds ") + cand + " (the candidate's value)";
    if (removed) reason += (reason.empty() ? "" : "; ") + std::string("a removed line holds ") + base + " (the baseline's value)";
    *strength += (added ? 2 : 0) + (removed ? 1 : 0);
  }
  return reason;
}

bool Covers(const Hunk& h, int line) {
  if (h.new_lines > 0) return line >= h.new_start && line < h.new_start + h.new_lines;
  return false;
}

}  // namespace

Result<ValueTrace> TraceValue(const ValueTraceRequest& req) {
  ValueTrace trace;
  PARITY_ASSIGN_OR_RETURN(std::vector<Hunk> hunks, AllDiffHunks(req.repo, req.baseline_ref, req.candidate_ref));
  Code code(req.worktree);
  if (code.truncated()) trace.notes.push_back("only the first " + std::to_string(kMaxFiles) + " Python files were searched");
  const std::string rel = req.file.lexically_normal().lexically_relative(req.worktree.lexically_normal()).generic_string();
  const Source* origin = code.Find(rel);

  // Hunks that hold the differing values.
  std::map<size_t, TracedHunk> found;  // by hunk index
  std::map<size_t, int> strength;
  for (size_t i = 0; i < hunks.size(); ++i) {
    int s = 0;
    std::string why = ValueMatchReason(hunks[i], req.values, &s);
    if (s == 0) continue;
    found[i].hunk = hunks[i];
    found[i].reasons.push_back(why);
    strength[i] += s * 10;
  }

  // The names on the line, followed back to where they are set.
  std::vector<Follow> queue;
  std::set<std::string> seen;
  if (origin && req.line >= 1 && static_cast<size_t>(req.line) <= origin->lines.size()) {
    for (const std::string& n : DottedNames(origin->lines[req.line - 1])) {
      if (n.rfind("self.", 0) == 0 && n.find('.', 5) == std::string::npos && seen.insert(LastPart(n)).second) {
        queue.push_back({LastPart(n), 0});
      }
    }
  } else {
    trace.notes.push_back(rel + ":" + std::to_string(req.line) + " could not be read in the worktree: no name followed");
  }
  std::vector<TraceStep> steps;
  std::vector<int> parent;  // per step: the step it was reached from
  std::map<std::string, size_t> step_of_name;
  for (size_t q = 0; q < queue.size() && q < 32; ++q) {
    const Follow f = queue[q];
    if (f.depth >= kMaxDepth) continue;
    for (const Source& src : code.files()) {
      for (size_t li = 0; li < src.lines.size(); ++li) {
        auto rhs = AssignedBy(src.lines[li], f.name);
        if (!rhs) continue;
        steps.push_back({src.rel, static_cast<int>(li + 1), Trim(src.lines[li]), "sets " + f.name});
        parent.push_back(f.parent);
        const int here = static_cast<int>(steps.size() - 1);
        step_of_name.emplace(f.name, steps.size() - 1);
        std::vector<std::string> names = DottedNames(*rhs);
        Scope scope = ScopeOf(src, li);
        for (const std::string& n : names) {
          std::string part = LastPart(n);
          auto param = std::find(scope.params.begin(), scope.params.end(), n);
          if (param != scope.params.end() && !scope.class_name.empty() && scope.def_line &&
              Trim(src.lines[*scope.def_line]).rfind("def __init__", 0) == 0) {
            // A constructor parameter: what each `ClassName(...)` call passes for it.
            size_t index = static_cast<size_t>(param - scope.params.begin());
            for (const Source& caller : code.files()) {
              for (size_t cl = 0; cl < caller.lines.size(); ++cl) {
                auto args = CallArguments(caller.lines[cl], scope.class_name);
                if (!args) continue;
                std::string passed;
                for (const std::string& a : *args) {
                  if (a.rfind(n + "=", 0) == 0) passed = Trim(a.substr(n.size() + 1));
                }
                size_t positional = 0;
                for (size_t k = 0; passed.empty() && k < args->size(); ++k) {
                  if ((*args)[k].find('=') != std::string::npos) continue;
                  if (positional++ == index) passed = (*args)[k];
                }
                if (passed.empty()) continue;
                steps.push_back({caller.rel, static_cast<int>(cl + 1), Trim(caller.lines[cl]),
                                 "calls " + scope.class_name + " with " + n + " = " + passed});
                parent.push_back(here);
                const int call = static_cast<int>(steps.size() - 1);
                for (const std::string& m : DottedNames(passed)) {
                  if (seen.insert(LastPart(m)).second) queue.push_back({LastPart(m), f.depth + 1, call});
                }
              }
            }
          } else if (part != "self" && seen.insert(part).second) {
            queue.push_back({part, f.depth + 1, here});
          }
        }
      }
    }
  }
  // Hunks that hold a step of the chain, or assign one of its names.
  std::map<size_t, int> reached_by;  // hunk -> the chain step in it
  for (size_t i = 0; i < hunks.size(); ++i) {
    for (size_t k = 0; k < steps.size(); ++k) {
      const TraceStep& st = steps[k];
      if (hunks[i].file == st.file && Covers(hunks[i], st.line)) {
        found[i].hunk = hunks[i];
        found[i].reasons.push_back("holds " + st.file + ":" + std::to_string(st.line) + " (" + st.why + ")");
        strength[i] += 5;
        reached_by.emplace(i, static_cast<int>(k));
      }
    }
    for (const auto& [name, _] : step_of_name) {
      for (const std::string& l : hunks[i].lines) {
        if (l.size() > 1 && l[0] == '-' && AssignedBy(l.substr(1), name)) {
          found[i].hunk = hunks[i];
          found[i].reasons.push_back("removes a line that set " + name);
          strength[i] += 3;
          break;
        }
      }
    }
  }
  std::vector<std::pair<int, size_t>> order;
  for (const auto& [i, _] : found) order.push_back({-strength[i], i});
  std::sort(order.begin(), order.end());
  for (const auto& [_, i] : order) {
    TracedHunk t = found[i];
    std::sort(t.reasons.begin(), t.reasons.end());
    t.reasons.erase(std::unique(t.reasons.begin(), t.reasons.end()), t.reasons.end());
    trace.hunks.push_back(std::move(t));
  }
  // The chain: the steps from the line to the strongest hunk a step reached.
  for (const auto& [_, i] : order) {
    auto it = reached_by.find(i);
    if (it == reached_by.end()) continue;
    for (int k = it->second; k >= 0; k = parent[k]) trace.chain.insert(trace.chain.begin(), steps[k]);
    break;
  }
  if (!trace.hunks.empty()) {
    const TracedHunk& best = trace.hunks.front();
    trace.sentence = "the differing value is set in " + best.hunk.file + " " + best.hunk.header + " (" +
                     best.reasons.front() + ")";
    if (!trace.chain.empty()) {
      std::string chain;
      for (const TraceStep& st : trace.chain) chain += (chain.empty() ? "" : " -> ") + st.file + ":" + std::to_string(st.line) + " (" + st.why + ")";
      trace.sentence += "; names followed from " + rel + ":" + std::to_string(req.line) + ": " + chain;
    }
    return trace;
  }
  // Nothing found: every hunk, the closest first (same file by line distance, then by path).
  trace.chain = steps;  // every step followed, none reaching a change
  trace.all_hunks = hunks;
  std::stable_sort(trace.all_hunks.begin(), trace.all_hunks.end(), [&](const Hunk& a, const Hunk& b) {
    auto key = [&](const Hunk& h) {
      long distance = h.file == rel ? std::labs(static_cast<long>(h.new_start) - req.line) : 1L << 30;
      return std::make_pair(h.file == rel ? 0 : 1, distance);
    };
    return key(a) < key(b);
  });
  trace.sentence = "no chain from " + rel + ":" + std::to_string(req.line) + " reached a changed hunk, and no changed "
                   "hunk holds the differing values; the " + std::to_string(hunks.size()) + " changed hunk(s) of the "
                   "commit range are listed, the closest to the line first";
  return trace;
}

json ToJson(const ValueTrace& trace) {
  json chain = json::array();
  for (const TraceStep& s : trace.chain) chain.push_back({{"file", s.file}, {"line", s.line}, {"code", s.code}, {"why", s.why}});
  json hunks = json::array();
  for (const TracedHunk& h : trace.hunks) {
    json j = ToJson(h.hunk);
    j["reasons"] = h.reasons;
    hunks.push_back(j);
  }
  json all = json::array();
  for (const Hunk& h : trace.all_hunks) all.push_back(ToJson(h));
  return {{"sentence", trace.sentence}, {"hunks", hunks}, {"chain", chain}, {"all_hunks", all}, {"notes", trace.notes}};
}

}  // namespace parity::msprobe
