// Runs parity's own tools in-process for the workflow pipelines, exactly as `parity call`
// and the server do (mcp::InvokeTool): same arguments, same ledger entries, same outputs.
// Progress notifications go to a callback; a tool that asks the user something the
// pipeline did not answer is an error (the pipeline pre-answers every question).
// Two callers: the command line (`parity premerge|hunt|bisect`: the config is the user's,
// caller_is_user) and the premerge/hunt MCP tools (the config is the MCP caller's: every
// step is judged by the user's policy as if the caller had made it, and what the policy
// does not allow is asked of the user through the client, never answered by the caller).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "domain/workflow/premerge.h"
#include "mcp-server/registry.h"
#include "support/cancel.h"

namespace parity::tools {

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
  // Whether the pipeline's arguments are the user's own (the command line; the default).
  void SetCallerIsUser(bool yes) { caller_is_user_ = yes; }

 private:
  std::filesystem::path report_dir_;
  ProgressFn on_progress_;
  CancellationToken cancel_;
  std::shared_ptr<const policy::Policy> policy_;
  std::function<Result<nlohmann::json>(const nlohmann::json&)> prompt_;
  bool caller_is_user_ = true;
  mcp::ToolRegistry registry_;
};

}  // namespace parity::tools
