// msprobe_first_diff's inputs, loaded: two dumps compared (and aligned), an msprobe compare
// result read back, or the real msprobe compare run and its result read. Internal to
// analyze.cpp and scan.cpp (the per-pair first diff of a dump tree).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/align.h"
#include "domain/msprobe/analyze.h"
#include "domain/msprobe/compare_csv.h"
#include "domain/msprobe/noise_envelope.h"
#include "domain/msprobe/stack.h"

namespace parity::msprobe::analyze_internal {

struct Loaded {
  // Kept alive for DiffInput::describe.
  std::optional<Dump> baseline, candidate;
  std::optional<CompareTable> table;          // msprobe's pairing: the CSV
  std::optional<Alignment> alignment;
  std::optional<CompareTable> aligned_table;  // the alignment's pairing: the first-diff walk
  std::optional<TextTable> text_table;
  std::optional<StackIndex> stacks;
  std::unordered_map<std::string, std::vector<std::string>> csv_stacks;
  std::unordered_map<std::string, std::string> parents;
  std::vector<Dump> repeats;                  // the baseline's repeats (noise_dumps)
  std::optional<NoiseEnvelope> noise;         // measured from them
  DiffInput input;
  DumpMode mode = DumpMode::kSummary;
  nlohmann::json source;
  std::optional<std::string> table_file;
};

// The calibrated criterion and the baseline's repeats (noise_dumps) come together, and only
// with parity's own compare of the dumps: a compare result or msprobe's run has no dumps to
// measure the noise in.
Status CheckCalibration(const AnalyzeOptions& options);
Status LoadFromDumps(const AnalyzeOptions& options, Loaded& loaded);
Status LoadFromTable(const std::filesystem::path& path, Loaded& loaded, const AnalyzeOptions& options);
// The real msprobe compare on the two dumps, then its result read like any compare result.
Status LoadFromMsprobeRun(const AnalyzeOptions& options, Loaded& loaded);

}  // namespace parity::msprobe::analyze_internal
