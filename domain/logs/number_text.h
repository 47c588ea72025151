// The shortest text that reads back as the same double, as the CSV files parity writes
// spell values (nan, inf, -inf for the non-finite ones).
#pragma once

#include <charconv>
#include <cmath>
#include <string>

namespace parity::logs {

inline void AppendNumber(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "nan";
  } else if (std::isinf(v)) {
    out += v > 0 ? "inf" : "-inf";
  } else {
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  }
}

}  // namespace parity::logs
