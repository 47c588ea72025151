// The steps a run covers: which were logged, on which grid, which are missing. Shared by
// the text and the TensorBoard readers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "domain/logs/log_result.h"

namespace parity::logs {

// Fills result.steps from the loss series (or the first metric): range, logging interval,
// gaps against `total_steps` or options.expected_steps, duplicates; adds the warnings.
void FillCoverage(ParseResult& result, const ParseOptions& options, std::optional<int64_t> total_steps,
                  std::vector<ParseWarning>& warnings);

}  // namespace parity::logs
