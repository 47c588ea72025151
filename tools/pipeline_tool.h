// What the premerge and hunt MCP tools share. A pipeline started by an MCP caller runs with
// the caller's rights, not the user's: every step is a tool call judged by the user's
// policy exactly as if the caller had made it (caller_is_user false), and what the policy
// does not allow is asked of the user through the client (ToolContext::AskUser: a live
// elicitation or an MRTR/task input request), never answered by the caller. The pipeline's
// steps, notes and the inner tools' progress become the call's progress (a task's status).
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "domain/workflow/pipeline.h"
#include "mcp-server/tool.h"
#include "tools/pipeline_runner.h"

namespace parity::tools {

class ToolPipeline : public workflow::PipelineObserver {
 public:
  // `folders`: the config's folders the tool has authorized through `ctx` (the user's policy
  // or the client's roots), kept allowed for the steps (they see no roots of their own).
  ToolPipeline(mcp::ToolContext& ctx, const std::filesystem::path& report_dir,
               const std::vector<std::pair<std::filesystem::path, bool>>& folders);

  InProcessToolRunner& runner() { return runner_; }
  void Step(size_t index, size_t total, std::string_view title) override;
  void Note(std::string_view line) override;

 private:
  // `inner`: a step's tool progress, shown under the step's title.
  void Say(const std::string& message, bool inner = false);  // "" : the step itself

  mcp::ToolContext& ctx_;
  std::mutex mutex_;
  double said_ = 0;  // progress must increase: one unit per message
  std::string step_;
  InProcessToolRunner runner_;
};

// The spec both pipeline tools share: not read-only, destructive (worktrees removed,
// checkpoint folders emptied), not idempotent, open world, and may run as a task.
void DeclarePipelineTool(mcp::ToolSpec& spec);

}  // namespace parity::tools
