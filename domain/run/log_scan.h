// What run_training reads from a training log while and after it runs: the step lines of
// torchtitan(-npu) and Megatron/MindSpeed (step, loss, grad norm, NaN/Inf), and the error
// lines the pre-merge skill says must be reported (Traceback, ERROR, NPU/CUDA OOM, ERRxxxxx,
// E?9999, HCCL timeouts, Killed, `metadata is None`, a path that became the string "None").
// Fed incrementally, so live progress and the final verdict use the same matcher. The full
// metric parser lives in domain/logs; this is only what a job needs to judge itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::run {

using json = nlohmann::json;

struct LogFinding {
  std::string kind;  // traceback, error_line, npu_oom, cuda_oom, acl_error, cann_inner_error,
                     // hccl_timeout, killed, dcp_metadata_missing, none_string, path_missing,
                     // device_fault, child_failed, segfault
  int64_t line = 0;  // 1-based
  std::string text;
  std::string hint;
};

class LogScanner {
 public:
  // Appends raw log bytes; complete lines are scanned, a trailing partial line is kept.
  void Feed(std::string_view chunk);
  // Scans the trailing partial line, if any (call at the end of the log).
  void Flush();

  std::optional<int64_t> last_step() const { return last_step_; }
  std::optional<int64_t> total_steps() const { return total_steps_; }  // Megatron prints it
  std::optional<std::string> last_loss() const { return last_loss_; }
  std::optional<std::string> last_grad_norm() const { return last_grad_norm_; }
  int64_t step_lines() const { return step_lines_; }
  const std::vector<LogFinding>& findings() const { return findings_; }
  int64_t findings_dropped() const { return findings_dropped_; }
  const json& nan_inf() const { return nan_inf_; }  // [{step, metric, value, line}]

  json ToJson() const;

 private:
  void ScanLine(std::string line);

  std::string partial_;
  int64_t line_no_ = 0;
  std::optional<int64_t> last_step_, total_steps_;
  std::optional<std::string> last_loss_, last_grad_norm_;
  int64_t step_lines_ = 0;
  std::vector<LogFinding> findings_;
  int64_t findings_dropped_ = 0;
  json nan_inf_ = json::array();
};

}  // namespace parity::run
