// The probe lines inject_prints' helper (domain/inject/probe_helper.py) prints:
//   PARITY_PROBE {"id": ..., "site": "file:line", "when": "before|after|entry|return",
//                 "name": ..., "call": n, "rank": r, "type": ..., "hash": ..., ...}
// anywhere in a log line (after a torchrun "[rank0]:" prefix, a logger prefix, colours).
// Python's json.dumps writes NaN / Infinity / -Infinity as bare tokens, which JSON lacks:
// they are read as the strings "nan" / "inf" / "-inf", the convention of parse_log's JSON.
// parse_log finds these lines in its one pass over the log; compare_logs pairs them up.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::logs {

inline constexpr std::string_view kProbeMarker = "PARITY_PROBE";

struct ProbeRecord {
  int64_t line = 0;  // in the log, 1-based
  std::string id, site, when, name;
  int64_t call = 0;
  std::optional<int64_t> rank;  // the record's own "rank", else the line's torchrun prefix
  nlohmann::json record;        // the whole record as printed (non-finite numbers as strings)

  // "<id>|<when>|<name>|<call>|<rank>": what pairs a baseline probe with a candidate one.
  std::string Key() const;
};

struct MalformedProbe {
  int64_t line = 0;
  std::string error;
};

// Every probe line of one log, in log order (execution order on the probing rank).
struct ProbeLog {
  std::vector<ProbeRecord> records;
  std::vector<MalformedProbe> malformed;  // the first kMaxMalformedKept
  int64_t malformed_total = 0;
  int64_t dropped = 0;  // well-formed lines beyond kMaxProbeRecords, counted only

  static constexpr size_t kMaxProbeRecords = 100000;
  static constexpr size_t kMaxMalformedKept = 100;

  bool any() const { return !records.empty() || malformed_total > 0 || dropped > 0; }
  // Keeps a record or a malformed line, within the limits above.
  void Add(ProbeRecord record);
  void AddMalformed(int64_t line, std::string error);
};

// Reads the record that follows the marker in `text` (an ANSI-free line that contains
// kProbeMarker). `line_rank` is the line's torchrun prefix rank, used when the record has
// none. On failure returns nullopt and says why in `error` (bad JSON and where, a missing
// or mistyped field by name).
std::optional<ProbeRecord> ReadProbeLine(std::string_view text, std::optional<int> line_rank,
                                         int64_t line_number, std::string& error);

// The same from a record already decoded (parse_log's JSON read back by compare_logs).
std::optional<ProbeRecord> ProbeFromRecord(nlohmann::json record, std::optional<int> line_rank,
                                           int64_t line_number, std::string& error);

// Python's json.dumps text with its NaN / Infinity / -Infinity tokens (outside strings)
// rewritten as "nan" / "inf" / "-inf" strings.
std::string QuotePythonNonFinite(std::string_view json_text);

}  // namespace parity::logs
