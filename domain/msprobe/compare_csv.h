// msprobe compare tables as files: writing parity's table in msprobe 26's CSV column layout
// (per mode, formats.md §1.e.5, with NPU_Stack_Info when stacks are known), and reading an
// existing msprobe compare result (CSV, or the --xlsx form) back into first-diff facts.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "domain/msprobe/compare.h"
#include "domain/msprobe/first_diff.h"
#include "domain/msprobe/stack.h"
#include "support/status.h"

namespace parity::msprobe {

// The header msprobe 26 writes for a mode (stack column optional; Data_name in "all").
std::vector<std::string> CompareHeader(DumpMode mode, bool with_stack);

// How the rows are formatted: in blocks, by several threads, written in order. The file is
// the same byte for byte for any threads and block_rows (they change only the speed).
struct CsvWriteOptions {
  size_t threads = 0;        // 0: one per core, at most 4
  size_t block_rows = 4096;  // about 1.7 MB of text in statistics mode
};

// Writes the table; stacks may be null (then no NPU_Stack_Info column).
Status WriteCompareCsv(const CompareTable& table, const StackIndex* stacks, const std::filesystem::path& path,
                       const CsvWriteOptions& options = {});

// A table of text cells with its header, as read from CSV or XLSX.
struct TextTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int Column(const std::string& name) const;  // -1 when absent
};

Result<TextTable> ParseCsv(std::string_view text, const std::string& origin);
Result<TextTable> ReadCompareCsv(const std::filesystem::path& path);
// XLSX (a zip of XML): the first worksheet, through `unzip -p` (Info-ZIP).
Result<TextTable> ReadCompareXlsx(const std::filesystem::path& path);

// The mode of a compare result, from its columns.
Result<DumpMode> ModeOfTable(const TextTable& table, const std::string& origin);

// First-diff facts from an msprobe compare result; `table` must outlive the result.
Result<DiffInput> FactsFromTextTable(const TextTable& table, const DiffCriteria& criteria, const std::string& origin);

}  // namespace parity::msprobe
