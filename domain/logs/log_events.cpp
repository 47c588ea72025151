#include "domain/logs/log_events.h"

namespace parity::logs {
namespace {

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdent(char c) {
  return IsUpper(c) || IsDigit(c) || (c >= 'a' && c <= 'z') || c == '_';
}

bool Contains(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
}

// "ERR00100": torch_npu's formatErrorCode, ERR + submodule (2 digits) + code (3 digits).
bool HasNpuErrorCode(std::string_view line) {
  for (size_t at = line.find("ERR"); at != std::string_view::npos; at = line.find("ERR", at + 1)) {
    if (at + 8 > line.size()) break;
    bool digits = true;
    for (size_t i = at + 3; i < at + 8; ++i) digits = digits && IsDigit(line[i]);
    if (digits && (at + 8 == line.size() || !IsDigit(line[at + 8]))) return true;
  }
  return false;
}

// CANN's "EZ9999: Inner Error!" family: E, one capital or digit, 9999.
bool HasCannInnerError(std::string_view line) {
  for (size_t at = line.find("9999"); at != std::string_view::npos; at = line.find("9999", at + 1)) {
    if (at < 2 || line[at - 2] != 'E') continue;
    if (!(IsUpper(line[at - 1]) || IsDigit(line[at - 1]))) continue;
    if (at >= 3 && IsIdent(line[at - 3])) continue;
    if (at + 4 < line.size() && IsDigit(line[at + 4])) continue;
    return true;
  }
  return false;
}

// A word (not part of a longer identifier).
bool HasWord(std::string_view line, std::string_view word) {
  for (size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    const bool left = at == 0 || !IsIdent(line[at - 1]);
    const bool right = at + word.size() >= line.size() || !IsIdent(line[at + word.size()]);
    if (left && right) return true;
  }
  return false;
}

// "RuntimeError: ...", "torch.OutOfMemoryError: ...", "[Error]: ..." (ACL's text).
bool HasExceptionLine(std::string_view line) {
  for (size_t at = line.find("Error"); at != std::string_view::npos;
       at = line.find("Error", at + 1)) {
    const size_t after = at + 5;
    if (after < line.size() && (line[after] == ':' || line[after] == ']')) return true;
  }
  return false;
}

bool HasSignal(std::string_view line) {
  for (std::string_view s : {"SIGKILL", "SIGSEGV", "SIGABRT", "SIGBUS", "SIGTERM", "SIGFPE", "SIGILL"}) {
    if (Contains(line, s)) return true;
  }
  return false;
}

}  // namespace

const std::vector<ErrorNeedle>& ErrorNeedles() {
  // CANN's "EZ9999: Inner Error!" is found through "Error"; "out of memory" by "f ", since
  // "memory" itself is on every torchtitan metric line; the watchdog by its rare "hd".
  static const std::vector<ErrorNeedle> needles = {
      {"Traceback (most recent call last)", 10},  // "(m": "Tr" is in every "True"
      {"ERR", 0},
      {"Error", 0},
      {"out of memory", 5},
      {"Watchdog caught collective operation timeout", 4},
      {"NPU function error", 0},
      {"OPS function error", 0},
      {"HCCL function error", 0},
      {"reason=", 5},
      {"FORCE STOP", 4},  // "INFO" holds "FO" on every line
      {"CUDA error", 0},
      {"NCCL error", 0},
      {"Killed", 0},
      {"SIG", 0},
  };
  return needles;
}

std::optional<std::string> ClassifyErrorLine(std::string_view line) {
  if (Contains(line, "out of memory")) {
    if (Contains(line, "NPU")) return "npu_oom";
    if (Contains(line, "CUDA") || Contains(line, "GPU")) return "cuda_oom";
    return "oom";
  }
  if (Contains(line, "Watchdog caught collective operation timeout")) return "collective_timeout";
  if (HasNpuErrorCode(line)) return "torch_npu_error";
  if (HasCannInnerError(line)) return "cann_inner_error";
  if (Contains(line, "HCCL function error")) return "hccl_error";
  if (Contains(line, "NPU function error") || Contains(line, "OPS function error"))
    return "npu_function_error";
  if (Contains(line, "reason=[") || Contains(line, "reason=device") || Contains(line, "FORCE STOP"))
    return "device_fault";
  if (Contains(line, "CUDA error")) return "cuda_error";
  if (Contains(line, "NCCL error")) return "nccl_error";
  if (Contains(line, "Traceback (most recent call last)")) return "traceback";
  if (HasExceptionLine(line)) return "exception";
  if (HasWord(line, "ERROR")) return "error_log";
  if (HasWord(line, "Killed")) return "killed";
  if (HasSignal(line)) return "signal";
  return std::nullopt;
}

}  // namespace parity::logs
