// The user's own extraction regex. std::regex (ECMAScript) has no named groups, so
// "(?<name>...)" and Python's "(?P<name>...)" are rewritten to plain groups and their
// numbers remembered. A group named "step" gives the step; every other named group is a
// metric of that name.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "domain/logs/line_formats.h"
#include "support/status.h"

namespace parity::logs {

class UserRegex {
 public:
  // Errors name the problem: no named group, a bad pattern (std::regex's message).
  static Result<UserRegex> Compile(const std::string& pattern);

  // Fills `out` (metrics, step) from the first match in `line`; false when none.
  bool Match(std::string_view line, MetricLine& out) const;

  const std::vector<std::string>& metric_names() const { return names_; }

  // A literal every match contains (the longest top-level run of plain characters), or ""
  // when the pattern guarantees none (a top-level '|', no literal outside groups). Lines
  // without it cannot match, so the parser looks for it first and runs the regex only on
  // the lines that have it.
  const std::string& required_literal() const { return literal_; }

 private:
  std::regex regex_;
  std::vector<std::string> names_;        // metric groups' names
  std::vector<size_t> groups_;            // their group numbers
  std::optional<size_t> step_group_;
  std::string literal_;
  bool literal_starts_match_ = false;  // every match begins with literal_
};

// The literal every match of an ECMAScript `pattern` must contain ("" when unknown), and
// whether every match begins with it (the pattern starts with it).
std::string RequiredLiteral(const std::string& pattern, bool* starts_match = nullptr);

}  // namespace parity::logs
