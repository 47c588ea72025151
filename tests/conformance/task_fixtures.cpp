// The tools the conformance suite 0.2.0's tasks-extension scenarios name (SEP-2663:
// greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input,
// test_tool_with_task), written against the same ToolContext parity's tools use:
// ToolContext::RunInBackground is where each becomes a task.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/conformance/fixtures.h"

namespace parity::conformance {

namespace {

using mcp::json;
using mcp::ToolContext;
using mcp::ToolResult;

mcp::Tool Tool(std::string name, std::string description, json properties, std::vector<std::string> required,
               mcp::TaskSupport support, std::function<ToolResult(const json&, ToolContext&)> handler) {
  mcp::Tool t;
  t.spec.name = std::move(name);
  t.spec.description = std::move(description);
  t.spec.input_schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) t.spec.input_schema["required"] = required;
  t.spec.task_support = support;
  t.handler = std::move(handler);
  return t;
}

// Sleeps `seconds`, waking at once on a cancel; false when cancelled.
bool Work(ToolContext& ctx, double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (ctx.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !ctx.cancelled();
}

json Field(const char* type, const char* description) { return {{"type", type}, {"description", description}}; }

json Form(const json& properties) {
  json required = json::array();
  for (auto& [k, v] : properties.items()) required.push_back(k);
  return {{"type", "object"}, {"properties", properties}, {"required", required}};
}

}  // namespace

void AddTaskTools(mcp::Catalog& c) {
  c.tools.Add(Tool("greet", "Greets by name, at once (never a task)", {{"name", Field("string", "Who to greet")}},
                   {"name"}, mcp::TaskSupport::kForbidden, [](const json& args, ToolContext&) {
                     return ToolResult::Text("Hello, " + args.value("name", std::string("World")) + "!");
                   }));
  c.tools.Add(Tool("slow_compute", "Computes for `seconds` seconds in the background",
                   {{"seconds", Field("number", "How long to work")}, {"label", Field("string", "A name for the run")}},
                   {}, mcp::TaskSupport::kOptional, [](const json& args, ToolContext& ctx) {
                     double seconds = args.value("seconds", 1.0);
                     std::string label = args.value("label", std::string("compute"));
                     ctx.RunInBackground("computing " + label);
                     for (int i = 1; i <= static_cast<int>(seconds * 4); ++i) {
                       if (!Work(ctx, 0.25)) return ToolResult::Error(Cancelled("slow_compute " + label + " cancelled"));
                       ctx.Progress(i, seconds * 4, "computing " + label);
                     }
                     return ToolResult::Text("computed " + label + " in " + std::to_string(seconds) + " s");
                   }));
  c.tools.Add(Tool("failing_job", "Fails (a tool error) after about a second; must run as a task", json::object(), {},
                   mcp::TaskSupport::kRequired, [](const json&, ToolContext& ctx) {
                     ctx.RunInBackground("running a job that will fail");
                     if (!Work(ctx, 1.0)) return ToolResult::Error(Cancelled("failing_job cancelled"));
                     return ToolResult::Error(Unavailable("failing_job failed, as it always does"));
                   }));
  c.tools.Add(Tool("protocol_error_job", "Crashes in the background (a server fault, not a tool error)",
                   json::object(), {}, mcp::TaskSupport::kOptional, [](const json&, ToolContext& ctx) -> ToolResult {
                     ctx.RunInBackground("running a job that will crash");
                     Work(ctx, 0.2);
                     throw std::runtime_error("protocol_error_job crashed, as it always does");
                   }));
  c.tools.Add(Tool("confirm_delete", "Asks, from the background, before deleting a file",
                   {{"filename", Field("string", "The file to delete")}}, {}, mcp::TaskSupport::kOptional,
                   [](const json& args, ToolContext& ctx) {
                     std::string file = args.value("filename", std::string("file"));
                     ctx.RunInBackground("about to delete " + file);
                     auto answer = ctx.Elicit("confirm_delete", "Delete " + file + "?",
                                              Form({{"confirm", Field("boolean", "Delete it")}}));
                     if (!answer.ok()) return ToolResult::Error(answer.status());
                     bool yes = answer->action == mcp::ElicitAnswer::Action::kAccept &&
                                answer->content.value("confirm", false);
                     return ToolResult::Text(yes ? "deleted " + file : "kept " + file);
                   }));
  c.tools.Add(Tool("multi_input", "Asks two questions at once from the background", json::object(), {},
                   mcp::TaskSupport::kOptional, [](const json&, ToolContext& ctx) {
                     ctx.RunInBackground("gathering two answers");
                     json form = Form({{"name", Field("string", "A name")}, {"confirm", Field("boolean", "Go on")}});
                     auto first = ctx.Elicit("first", "First question", form);
                     auto second = ctx.Elicit("second", "Second question", form);  // asked together
                     if (!first.ok()) return ToolResult::Error(first.status());
                     if (!second.ok()) return ToolResult::Error(second.status());
                     return ToolResult::Text("answers: " + first->content.value("name", std::string("?")) + ", " +
                                             second->content.value("name", std::string("?")));
                   }));
  c.tools.Add(Tool("test_tool_with_task", "Asks for a name inline (MRTR), then greets from a task", json::object(), {},
                   mcp::TaskSupport::kRequired, [](const json&, ToolContext& ctx) {
                     auto answer = ctx.Elicit("user_name", "What is your name?",
                                              Form({{"name", Field("string", "Your name")}}));
                     if (!answer.ok()) return ToolResult::Error(answer.status());
                     std::string name = answer->content.value("name", std::string("unknown"));
                     ctx.RunInBackground("greeting " + name);
                     if (!Work(ctx, 0.2)) return ToolResult::Error(Cancelled("cancelled"));
                     return ToolResult::Text("Hello, " + name + "! (from a task)");
                   }));
}

}  // namespace parity::conformance
