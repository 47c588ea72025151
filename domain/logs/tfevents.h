// TensorBoard event files: TFRecord framing (length, masked CRC-32C of the length, data,
// masked CRC-32C of the data) around tensorflow.Event protobufs, whose Summary values carry
// scalars (simple_value, or a scalar TensorProto). Decoded by hand: the few fields needed
// do not justify a protobuf dependency. Scalars are float32 or float64 stored in full, which
// is why they settle bitwise questions that printed logs cannot.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "domain/logs/log_result.h"

namespace parity::logs {

struct ScalarEvent {
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  double value = 0;
};

struct EventFileStats {
  int64_t records = 0;
  int64_t skipped_records = 0;  // data CRC mismatch or undecodable protobuf
  std::vector<ParseWarning> warnings;
};

// Whether 12 bytes start a TFRecord: their length CRC matches.
bool TfRecordHeaderValid(const unsigned char* first12);

// The event files (*tfevents* names) under `dir`, up to 4 levels deep, sorted.
std::vector<std::filesystem::path> FindEventFiles(const std::filesystem::path& dir);

// Calls on_scalar for every scalar in one event file. Errors: unreadable file, a length
// CRC mismatch (framing lost). A data CRC mismatch skips the record with a warning; a
// truncated last record is a warning (the writer may still be running).
// `on_bytes`, when given, sees the file's bytes (for hashing them on the same read).
Status ReadEventFile(const std::filesystem::path& path,
                     const std::function<void(const ScalarEvent&)>& on_scalar, EventFileStats& stats,
                     const std::function<void(std::string_view)>& on_bytes = nullptr);

// parse_log over event files: `path` is one file or a directory searched for
// "*tfevents*" files (sha256: over their bytes in path order). Metrics map to tags (loss -> loss_metrics/global_avg_loss, ...; a
// metric named like a tag reads that tag).
Result<ParseResult> ParseTensorBoard(const std::filesystem::path& path, const ParseOptions& options);

}  // namespace parity::logs
