// The text-log parser: fed whole lines of a log in blocks, in order, it finds the metric
// lines of every supported format (line_formats.h), error lines, success markers, the
// user's keywords or regex and inject_prints' probe lines in one pass, keeps every rank's
// series apart, and at the end builds the ParseResult. It never reads files itself
// (log_parser.cpp does, from a mapping, a pipe or a decompressor).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "domain/logs/log_result.h"
#include "domain/logs/user_regex.h"

namespace parity::logs {

class TextLogParser {
 public:
  virtual ~TextLogParser() = default;

  // Processes whole lines [begin, end): `end` is just past a '\n', or the end of a line
  // longer than a block (NoteLongLine first).
  virtual void Feed(const char* begin, const char* end) = 0;
  // The file's last line when it has no line end: a cut or half-written line. Its values
  // count only when each is complete (see docs/tools/parse_log.md, "Complete lines").
  virtual void FeedUnterminatedLast(const char* begin, const char* end) = 0;
  // The file's size, to size the series once the first block shows how dense they are.
  virtual void ExpectBytes(uint64_t bytes) = 0;
  virtual void NoteLongLine(int64_t bytes) = 0;
  virtual ParseResult Finish(ParseResult result) = 0;
};

std::unique_ptr<TextLogParser> MakeTextLogParser(const ParseOptions& options, std::optional<UserRegex> regex);

}  // namespace parity::logs
