// A tool result too large to send (over kMaxToolResultBytes) is never cut and never lost:
// its JSON is written to <report_dir>/results/<tool>-<time>-<hash>.json, and the call
// answers an error result naming the file, with a resource link to each page,
// parity://report/results/<file>/<page> (page from 0): kResultPageBytes of the JSON text
// each, cut only between UTF-8 sequences, so that the pages put end to end are the file.
// resources/read serves them (MakeResultPagesTemplate); only files of that one folder of
// the server's report directory, named as SpillResult names them, can be read.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "mcp-server/registry.h"
#include "support/policy.h"

namespace parity::mcp {

inline constexpr size_t kResultPageBytes = 64 * 1024;

struct SpilledResult {
  std::filesystem::path path;  // the file written
  std::string file;            // its name, as the page URIs carry it
  size_t bytes = 0;
  size_t pages = 0;
};

// Writes `text` (a result's JSON) under report_dir/results when the policy lets the server
// write there; an error saying why not otherwise.
Result<SpilledResult> SpillResult(const std::filesystem::path& report_dir, const policy::Policy& policy,
                                  std::string_view tool, const std::string& text);

std::string ResultPageUri(const std::string& file, size_t page);

// Page `page` of report_dir/results/<file>: NotFound past the last page.
Result<std::string> ReadResultPage(const std::filesystem::path& report_dir, const std::string& file, size_t page);

ResourceTemplate MakeResultPagesTemplate();

}  // namespace parity::mcp
