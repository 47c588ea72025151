// UTC timestamps as ISO 8601 ("2026-11-30T05:21:02Z"), the one form parity writes in its
// ledger, task records and git summaries.
#pragma once

#include <cstdint>
#include <string>

namespace parity {

std::string IsoTimeUtc(int64_t epoch_seconds);
std::string NowIsoUtc();

}  // namespace parity
