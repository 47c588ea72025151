// Reading one printed number the way Python prints it: optional sign, digits with optional
// ',' thousands separators (torchtitan's tps), a fraction, an exponent (Megatron's %.6E),
// or nan / inf in any case (Python's 'E' format prints NAN / INF). Also reports how many
// decimals the text carries, which bounds how precisely the value is known.
#pragma once

#include <optional>
#include <string_view>

#include "domain/logs/series.h"

namespace parity::logs {

struct PrintedNumber {
  double value = 0;
  Decimals decimals = 0;  // effective decimal places: fraction digits minus the exponent
  size_t length = 0;      // characters consumed
};

// Parses the number at the start of `text` (no leading spaces). nullopt when there is none.
std::optional<PrintedNumber> ParsePrintedNumber(std::string_view text);

// Parses an integer at the start of `text`, allowing ',' separators; nullopt when none.
std::optional<int64_t> ParsePrintedInteger(std::string_view text, size_t* length = nullptr);

}  // namespace parity::logs
