// The series files parse_log writes (domain/logs/series_file.h), served as MCP resources a
// client reads page by page: parity://report/parse_log/<file>/<page> (page from 0), each
// the CSV header plus up to kSeriesRowsPerPage rows. Only files of that one folder of the
// server's report directory, named like parse_log names them, can be read.
#pragma once

#include <cstdint>
#include <string>

#include "mcp-server/registry.h"

namespace parity::tools {

std::string SeriesUri(const std::string& file, int64_t page);

mcp::ResourceTemplate MakeSeriesResourceTemplate();

}  // namespace parity::tools
