// Which error a log line reports. The parser's scanner finds candidate lines by literal
// needles (kErrorNeedles); ClassifyErrorLine then decides, on the whole line, the most
// specific kind, or that the line is no error after all ("Error handling enabled").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parity::logs {

// The literal needles that may start an error line's evidence, each with the offset of the
// byte pair the scanner fingerprints it by (picked to be rare in training logs).
struct ErrorNeedle {
  std::string text;
  int anchor;
};
const std::vector<ErrorNeedle>& ErrorNeedles();

// The kind of error the (ANSI-stripped) line reports, most specific first:
// npu_oom, cuda_oom, oom, collective_timeout, torch_npu_error (ERRmmccc), cann_inner_error
// (E?9999), hccl_error, npu_function_error, device_fault, cuda_error, nccl_error, traceback,
// exception (SomethingError: ...), error_log (ERROR level), killed, signal.
std::optional<std::string> ClassifyErrorLine(std::string_view line);

}  // namespace parity::logs
