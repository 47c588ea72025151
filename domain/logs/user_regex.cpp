#include "domain/logs/user_regex.h"

#include "domain/logs/number.h"

namespace parity::logs {

std::string RequiredLiteral(const std::string& pattern, bool* starts_match) {
  if (starts_match) *starts_match = false;
  std::string best, run;
  bool run_at_start = true;   // `run` began at the pattern's first atom
  bool best_at_start = false;
  int depth = 0;
  bool last_was_literal = false;  // the previous atom is the last character of `run`
  auto end_run = [&]() {
    if (run.size() > best.size()) {
      best = run;
      best_at_start = run_at_start;
    }
    run.clear();
    run_at_start = false;
    last_was_literal = false;
  };
  auto is_alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= pattern.size()) return "";
      const char next = pattern[++i];
      if (depth > 0) continue;
      if (is_alnum(next)) {
        end_run();  // \d, \s, \w, \b, \n, \x41, backreferences: not plain characters
      } else {
        run += next;  // an escaped punctuation character stands for itself
        last_was_literal = true;
      }
      continue;
    }
    if (c == '[') {  // a class: skip to its end (a ']' first in the class is literal)
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      for (; j < pattern.size() && pattern[j] != ']'; ++j) {
        if (pattern[j] == '\\') ++j;
      }
      i = j;
      if (depth == 0) end_run();
      continue;
    }
    if (c == '(') {
      ++depth;
      if (depth == 1) end_run();
      continue;
    }
    if (c == ')') {
      if (depth > 0) --depth;
      continue;
    }
    if (depth > 0) continue;
    switch (c) {
      case '|':
        return "";  // alternatives at the top: no literal is common to all
      case '*':
      case '?':
      case '{':
        // The atom before may be absent: it is not required.
        if (last_was_literal && !run.empty()) run.pop_back();
        end_run();
        if (c == '{') {
          const size_t close = pattern.find('}', i);
          if (close == std::string::npos) return "";
          i = close;
        }
        break;
      case '+':
        end_run();  // the atom is required, what follows is not adjacent to a fixed run
        break;
      case '.':
      case '^':
      case '$':
        end_run();
        break;
      default:
        run += c;
        last_was_literal = true;
    }
  }
  end_run();
  if (starts_match) *starts_match = best_at_start && !best.empty();
  return best;
}

Result<UserRegex> UserRegex::Compile(const std::string& pattern) {
  UserRegex r;
  std::string rewritten;
  size_t group = 0;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      rewritten += c;
      rewritten += pattern[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      rewritten += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      rewritten += c;
      continue;
    }
    if (c != '(') {
      rewritten += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '?') {
      size_t name_start = 0;
      if (i + 2 < pattern.size() && pattern[i + 2] == '<' && i + 3 < pattern.size() &&
          pattern[i + 3] != '=' && pattern[i + 3] != '!') {
        name_start = i + 3;
      } else if (i + 3 < pattern.size() && pattern[i + 2] == 'P' && pattern[i + 3] == '<') {
        name_start = i + 4;
      }
      if (name_start == 0) {  // (?: (?= (?! and look-behinds: not capturing
        rewritten += c;
        continue;
      }
      const size_t close = pattern.find('>', name_start);
      if (close == std::string::npos)
        return InvalidArgument("regex: unterminated group name at offset " + std::to_string(i));
      const std::string name = pattern.substr(name_start, close - name_start);
      if (name.empty()) return InvalidArgument("regex: empty group name at offset " + std::to_string(i));
      ++group;
      if (name == "step") {
        r.step_group_ = group;
      } else {
        r.names_.push_back(name);
        r.groups_.push_back(group);
      }
      rewritten += '(';
      i = close;
      continue;
    }
    ++group;
    rewritten += c;
  }
  if (r.names_.empty()) {
    return InvalidArgument("regex: no named group for a metric value")
        .WithHint("name the value's group, e.g. \"loss=(?<loss>[-+0-9.eE]+|nan|inf)\"; "
                  "a group named \"step\" gives the step");
  }
  r.literal_ = RequiredLiteral(pattern, &r.literal_starts_match_);
  try {
    r.regex_ = std::regex(rewritten, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidArgument(std::string("regex: ") + e.what()).WithEvidence("pattern", pattern);
  }
  return r;
}

bool UserRegex::Match(std::string_view line, MetricLine& out) const {
  std::match_results<std::string_view::const_iterator> m;
  auto from = line.begin();
  if (!literal_.empty()) {
    const size_t at = line.find(literal_);
    if (at == std::string_view::npos) return false;  // no match can lack it
    // The leftmost match starts at an occurrence of the literal: no earlier start can match.
    if (literal_starts_match_) from += static_cast<std::ptrdiff_t>(at);
  }
  const auto flags = from == line.begin() ? std::regex_constants::match_default
                                          : std::regex_constants::match_prev_avail;
  if (!std::regex_search(from, line.end(), m, regex_, flags)) return false;
  bool any = false;
  for (size_t i = 0; i < names_.size(); ++i) {
    if (!m[groups_[i]].matched) continue;
    const std::string_view text(line.data() + (m[groups_[i]].first - line.begin()), m[groups_[i]].length());
    if (auto n = ParsePrintedNumber(text)) {
      out.metrics.push_back({names_[i], n->value, n->decimals});
      any = true;
    }
  }
  if (step_group_ && m[*step_group_].matched) {
    const std::string_view text(line.data() + (m[*step_group_].first - line.begin()), m[*step_group_].length());
    if (auto s = ParsePrintedInteger(text)) out.step = *s;
  }
  return any;
}

}  // namespace parity::logs
