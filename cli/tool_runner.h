// Runs parity's own tools in-process for the workflow pipelines, exactly as `parity call`
// and the server do (mcp::InvokeTool): same arguments, same ledger entries, same outputs.
// Progress notifications go to a callback; a tool that asks the user something the
// pipeline did not answer is an error (the pipeline pre-answers every question).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "domain/workflow/premerge.h"
#include "mcp-server/registry.h"
#include "support/cancel.h"

namespace parity::cli {

class InProcessToolRunner : public workflow::StepRunner {
 public:
  using ProgressFn = std::function<void(double done, std::optional<double> total, const std::string& message)>;
  InProcessToolRunner(std::filesystem::path report_dir, ProgressFn on_progress);

  Result<nlohmann::json> Call(const std::string& tool, const nlohmann::json& arguments) override;

  // Every later call gets this token (a pipeline cancelled by SIGINT/SIGTERM stops its
  // training jobs the way an MCP client's cancellation does).
  void SetCancellation(CancellationToken token) { cancel_ = std::move(token); }
  // The user's policy every call runs under, and how the user is asked at the terminal
  // for what it does not allow (empty with --yes: refused instead).
  void SetPolicy(std::shared_ptr<const policy::Policy> policy,
                 std::function<Result<nlohmann::json>(const nlohmann::json&)> prompt) {
    policy_ = std::move(policy);
    prompt_ = std::move(prompt);
  }

 private:
  std::filesystem::path report_dir_;
  ProgressFn on_progress_;
  CancellationToken cancel_;
  std::shared_ptr<const policy::Policy> policy_;
  std::function<Result<nlohmann::json>(const nlohmann::json&)> prompt_;
  mcp::ToolRegistry registry_;
};

}  // namespace parity::cli
