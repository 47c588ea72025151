#include "support/status.h"

namespace parity {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument: return "invalid argument";
    case ErrorKind::kNotFound: return "not found";
    case ErrorKind::kFailedPrecondition: return "failed precondition";
    case ErrorKind::kUnavailable: return "unavailable";
    case ErrorKind::kDeadlineExceeded: return "deadline exceeded";
    case ErrorKind::kCancelled: return "cancelled";
    case ErrorKind::kInputRequired: return "input required";
    case ErrorKind::kInternal: return "internal error";
  }
  return "error";
}

std::string Status::ToString() const {
  if (ok_) return "ok";
  std::string out = std::string(ErrorKindName(kind_)) + ": " + message_;
  if (!hint_.empty()) out += "\nwhat to do: " + hint_;
  for (const auto& e : evidence_) {
    out += "\n" + e.name + ": ";
    out += e.value.find('\n') == std::string::npos ? e.value : "\n" + e.value;
  }
  return out;
}

}  // namespace parity
