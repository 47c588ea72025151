#include "domain/workflow/hunt_script.h"

#include <charconv>
#include <sstream>

namespace parity::workflow {

namespace fs = std::filesystem;

namespace {

// Refuses what only a shell would understand in the command's words.
Status CheckNoShellSyntax(const std::string& text, const std::string& where) {
  static constexpr std::string_view kShell = "|&;<>()$`\"'\\*?\n";
  size_t bad = text.find_first_of(kShell);
  if (bad == std::string::npos) return Status::Ok();
  std::string c = text[bad] == '\n' ? "a newline" : std::string("'") + text[bad] + "'";
  return InvalidArgument(where + ": contains shell syntax (" + c + "); parity runs the command without a shell, "
                         "word by word")
      .WithHint("put the command in a script file and give `bash /path/to/that_script.sh` as run_script");
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

Result<std::vector<std::string>> SplitRunScript(const std::string& script, const std::string& where) {
  PARITY_RETURN_IF_ERROR(CheckNoShellSyntax(script, where));
  std::vector<std::string> words = Words(script);
  if (words.empty()) return InvalidArgument(where + ": empty");
  return words;
}

bool IsAssignmentWord(const std::string& word) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(word[0])) return false;
  for (size_t i = 1; i < eq; ++i) {
    if (!alpha(word[i]) && !(word[i] >= '0' && word[i] <= '9')) return false;
  }
  return true;
}

Result<RunScript> ParseRunScript(const std::string& script, const std::string& where) {
  if (script.find('\n') != std::string::npos) return CheckNoShellSyntax("\n", where);
  RunScript out;
  std::vector<std::string> words = Words(script);
  size_t i = 0;
  for (; i < words.size() && IsAssignmentWord(words[i]); ++i) {
    size_t eq = words[i].find('=');
    std::string name = words[i].substr(0, eq), value = words[i].substr(eq + 1);
    if (value.find_first_of("$`'\"\\") != std::string::npos) out.literal_values.push_back(words[i]);
    out.env[name] = value;
  }
  if (i == words.size() && !words.empty()) {
    return InvalidArgument(where + ": only variable assignments (" + std::to_string(i) + "), no command to run");
  }
  for (size_t k = i; k < words.size(); ++k) PARITY_RETURN_IF_ERROR(CheckNoShellSyntax(words[k], where));
  out.argv.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
  if (out.argv.empty()) return InvalidArgument(where + ": empty");
  return out;
}

std::string MapIntoWorktree(const std::string& path, const fs::path& code_path, const fs::path& worktree) {
  fs::path p(path);
  if (p.is_relative() || code_path.empty()) return path;
  fs::path root = code_path.lexically_normal();
  fs::path rel = p.lexically_normal().lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return path;
  return rel == "." ? worktree.string() : (worktree / rel).string();
}

std::vector<std::string> MapArgvIntoWorktree(std::vector<std::string> argv, const fs::path& code_path,
                                             const fs::path& worktree) {
  for (auto& word : argv) {
    size_t eq = word.rfind("--", 0) == 0 ? word.find('=') : std::string::npos;
    if (eq != std::string::npos) {
      word = word.substr(0, eq + 1) + MapIntoWorktree(word.substr(eq + 1), code_path, worktree);
    } else {
      word = MapIntoWorktree(word, code_path, worktree);
    }
  }
  return argv;
}

std::map<std::string, std::string> MapEnvIntoWorktree(std::map<std::string, std::string> env, const fs::path& code_path,
                                                      const fs::path& worktree) {
  for (auto& [name, value] : env) value = MapIntoWorktree(value, code_path, worktree);
  return env;
}

std::optional<StepsFlag> FindStepsFlag(const std::vector<std::string>& argv) {
  static const char* kNames[] = {"--training.steps", "--train-iters", "--train_iters", "--max_steps"};
  auto number = [](const std::string& s) -> std::optional<int> {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < 1) return std::nullopt;
    return v;
  };
  std::optional<StepsFlag> found;  // the last one wins, as with argparse
  for (size_t i = 0; i < argv.size(); ++i) {
    for (const char* name : kNames) {
      const std::string n = name;
      if (argv[i] == n && i + 1 < argv.size()) {
        if (auto v = number(argv[i + 1])) found = StepsFlag{i + 1, false, n, *v};
      } else if (argv[i].rfind(n + "=", 0) == 0) {
        if (auto v = number(argv[i].substr(n.size() + 1))) found = StepsFlag{i, true, n, *v};
      }
    }
  }
  return found;
}

std::vector<std::string> WithSteps(std::vector<std::string> argv, const StepsFlag& flag, int steps) {
  argv[flag.index] = flag.joined ? flag.name + "=" + std::to_string(steps) : std::to_string(steps);
  return argv;
}

}  // namespace parity::workflow
