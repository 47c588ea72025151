#include "domain/logs/user_regex.h"

#include "domain/logs/number.h"

namespace parity::logs {

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
  try {
    r.regex_ = std::regex(rewritten, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidArgument(std::string("regex: ") + e.what()).WithEvidence("pattern", pattern);
  }
  return r;
}

bool UserRegex::Match(std::string_view line, MetricLine& out) const {
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(line.begin(), line.end(), m, regex_)) return false;
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
