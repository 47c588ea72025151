// parse_log's full series kept out of the tool result: one CSV file per parsed log in the
// report directory, "rank,metric,step,value,decimals" (rank empty for unprefixed lines,
// value in the shortest text that reads back to the same double, "nan"/"inf"/"-inf",
// decimals empty for a value stored in full). Clients read it in pages (a resource) and
// compare_logs reads it back for a parse_log result given instead of a path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "domain/logs/log_result.h"
#include "support/status.h"

namespace parity::logs {

inline constexpr size_t kSeriesRowsPerPage = 5000;

// Writes every metric of every rank of `result` (atomically); returns the data rows written.
Result<int64_t> WriteSeriesFile(const std::filesystem::path& path, const ParseResult& result);

// Fills the series of `result`'s metrics and other_ranks from the file (metrics named in
// the file but absent from `result` are added).
Status ReadSeriesFile(const std::filesystem::path& path, ParseResult& result);

// The header plus data rows [page * kSeriesRowsPerPage, (page + 1) * kSeriesRowsPerPage).
Result<std::string> ReadSeriesPage(const std::filesystem::path& path, int64_t page);

}  // namespace parity::logs
