#include "support/iso_time.h"

#include <ctime>

namespace parity {

std::string IsoTimeUtc(int64_t epoch_seconds) {
  std::time_t t = static_cast<std::time_t>(epoch_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string NowIsoUtc() { return IsoTimeUtc(static_cast<int64_t>(std::time(nullptr))); }

}  // namespace parity
