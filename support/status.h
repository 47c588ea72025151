// Errors as values: a Status (ok, or an error kind with a message and its evidence) and
// Result<T> (a value or a Status). Every fallible function in parity returns one of these;
// exceptions from libraries are caught where they are called and turned into a Status.
// The mapping to the wire (JSON-RPC error or isError tool result) lives in one place:
// mcp-server/errors.cpp.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace parity {

enum class ErrorKind {
  kInvalidArgument,     // the caller's input is wrong: fix the arguments
  kNotFound,            // a named file, ref, job, tool... does not exist
  kFailedPrecondition,  // the world is not in the state needed (dirty tree, path exists)
  kUnavailable,         // something outside failed or is missing (process, host, library)
  kDeadlineExceeded,    // a time limit ran out
  kCancelled,           // the client cancelled
  kInputRequired,       // the tool needs an answer from the user before it can go on
  kInternal,            // a bug in parity
};

const char* ErrorKindName(ErrorKind kind);

// One piece of evidence attached to an error: "command", "exit_code", "log_excerpt", ...
struct EvidenceItem {
  std::string name;
  std::string value;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)), ok_(false) {}

  static Status Ok() { return Status(); }

  bool ok() const { return ok_; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  // What the user should do next; may be empty.
  const std::string& hint() const { return hint_; }
  const std::vector<EvidenceItem>& evidence() const { return evidence_; }

  Status& WithHint(std::string hint) & { hint_ = std::move(hint); return *this; }
  Status&& WithHint(std::string hint) && { hint_ = std::move(hint); return std::move(*this); }
  Status& WithEvidence(std::string name, std::string value) & {
    evidence_.push_back({std::move(name), std::move(value)});
    return *this;
  }
  Status&& WithEvidence(std::string name, std::string value) && {
    evidence_.push_back({std::move(name), std::move(value)});
    return std::move(*this);
  }
  // Prefixes the message with context: "reading baseline log: " + message.
  Status&& Context(const std::string& what) && {
    message_ = what + ": " + message_;
    return std::move(*this);
  }

  // "kind: message (hint)" plus evidence lines; what a human reads.
  std::string ToString() const;

 private:
  ErrorKind kind_ = ErrorKind::kInternal;
  std::string message_;
  std::string hint_;
  std::vector<EvidenceItem> evidence_;
  bool ok_ = true;
};

inline Status InvalidArgument(std::string m) { return Status(ErrorKind::kInvalidArgument, std::move(m)); }
inline Status NotFound(std::string m) { return Status(ErrorKind::kNotFound, std::move(m)); }
inline Status FailedPrecondition(std::string m) { return Status(ErrorKind::kFailedPrecondition, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(ErrorKind::kUnavailable, std::move(m)); }
inline Status DeadlineExceeded(std::string m) { return Status(ErrorKind::kDeadlineExceeded, std::move(m)); }
inline Status Cancelled(std::string m = "cancelled by the client") { return Status(ErrorKind::kCancelled, std::move(m)); }
inline Status Internal(std::string m) { return Status(ErrorKind::kInternal, std::move(m)); }

// A value of T, or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}                // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {         // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  Status take_status() && { return ok() ? Status() : std::move(std::get<Status>(v_)); }

  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::move(std::get<T>(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace parity

// Returns early from the enclosing function when a Status-producing expression fails.
#define PARITY_RETURN_IF_ERROR(expr)        \
  do {                                      \
    ::parity::Status parity_status_ = (expr); \
    if (!parity_status_.ok()) return parity_status_; \
  } while (0)

#define PARITY_CONCAT_INNER_(a, b) a##b
#define PARITY_CONCAT_(a, b) PARITY_CONCAT_INNER_(a, b)
// PARITY_ASSIGN_OR_RETURN(auto x, Compute()); declares x or returns the error.
#define PARITY_ASSIGN_OR_RETURN(decl, expr) \
  PARITY_ASSIGN_OR_RETURN_IMPL_(PARITY_CONCAT_(parity_result_, __LINE__), decl, expr)
#define PARITY_ASSIGN_OR_RETURN_IMPL_(tmp, decl, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).take_status();  \
  decl = std::move(tmp).value()
