#include "tools/pipeline_tool.h"

#include <cstdio>
#include <functional>
#include <memory>


namespace parity::tools {

namespace {

using nlohmann::json;

const char* ActionName(mcp::ElicitAnswer::Action a) {
  switch (a) {
    case mcp::ElicitAnswer::Action::kAccept: return "accept";
    case mcp::ElicitAnswer::Action::kDecline: return "decline";
    case mcp::ElicitAnswer::Action::kCancel: break;
  }
  return "cancel";
}

}  // namespace

ToolPipeline::ToolPipeline(mcp::ToolContext& ctx, const std::filesystem::path& report_dir,
                           const std::vector<std::pair<std::filesystem::path, bool>>& folders)
    : ctx_(ctx), runner_(report_dir, [this](double, std::optional<double>, const std::string& message) {
        if (!message.empty()) Say(message, true);
      }) {
  auto policy = std::make_shared<policy::Policy>(ctx.policy());
  for (const auto& [folder, write] : folders) policy->AddFolder(folder, write, "the pipeline's config, authorized");
  std::function<Result<json>(const json&)> prompt;
  if (ctx.CanAskUser()) {
    // The key names the question by its text, which describes the exact action: the same
    // question asked again on an MRTR retry or a task's rerun finds its answer.
    prompt = [&ctx](const json& params) -> Result<json> {
      const std::string message = params.value("message", "");
      char key[32];
      std::snprintf(key, sizeof key, "pipeline:%016zx", std::hash<std::string>{}(message));
      PARITY_ASSIGN_OR_RETURN(mcp::ElicitAnswer answer,
                              ctx.AskUser(key, message, params.value("requestedSchema", json::object())));
      json response = {{"action", ActionName(answer.action)}};
      if (answer.content.is_object()) response["content"] = answer.content;
      return response;
    };
  }
  runner_.SetPolicy(std::move(policy), std::move(prompt));
  runner_.SetCallerIsUser(false);
  runner_.SetCancellation(ctx.cancellation());
}

void ToolPipeline::Step(size_t index, size_t total, std::string_view title) {
  {
    std::lock_guard lock(mutex_);
    step_ = "step " + std::to_string(index) + "/" + std::to_string(total) + " " + std::string(title);
  }
  Say("");
}

void ToolPipeline::Note(std::string_view line) { Say(std::string(line)); }

void ToolPipeline::Say(const std::string& message, bool inner) {
  double n;
  std::string text;
  {
    std::lock_guard lock(mutex_);
    n = ++said_;
    text = message.empty() ? step_ : inner ? step_ + ": " + message : message;
  }
  ctx_.Progress(n, std::nullopt, text);
}

void DeclarePipelineTool(mcp::ToolSpec& spec) {
  spec.annotations.read_only = false;
  spec.annotations.destructive = true;
  spec.annotations.idempotent = false;
  spec.annotations.open_world = true;
  spec.task_support = mcp::TaskSupport::kOptional;
}

}  // namespace parity::tools
