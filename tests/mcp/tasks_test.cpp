// The 2025-11-25 tasks utility: task-augmented tools/call, tasks/get, tasks/result,
// tasks/list, tasks/cancel, and the taskSupport rules.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/mcp/harness.h"

namespace parity::mcp::testing {
namespace {

std::shared_ptr<Catalog> TaskTools(std::atomic<bool>& release) {
  auto c = std::make_shared<Catalog>();
  Tool job = MakeTool("job", [&release](const json& args, ToolContext& ctx) {
    while (!release && !ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (ctx.cancelled()) return ToolResult::Error(Cancelled());
    return ToolResult::Structured({{"echo", args}});
  });
  job.spec.task_support = TaskSupport::kOptional;
  c->tools.Add(job);
  Tool must = MakeTool("must_be_task", [](const json&, ToolContext&) { return ToolResult::Text("ran"); });
  must.spec.task_support = TaskSupport::kRequired;
  c->tools.Add(must);
  c->tools.Add(MakeTool("plain", [](const json&, ToolContext&) { return ToolResult::Text("plain"); }));
  return c;
}

TEST(Tasks, RunInTheBackgroundAndDeliverTheirResult) {
  std::atomic<bool> release{false};
  Client client(TaskTools(release));
  json init = client.Initialize();
  EXPECT_TRUE(init["result"]["capabilities"]["tasks"]["requests"]["tools"].contains("call"));
  json listed = client.Call("tools/list");
  EXPECT_EQ(listed["result"]["tools"][0]["execution"]["taskSupport"], "optional");

  json created = client.Call("tools/call", {{"name", "job"}, {"arguments", {{"x", 1}}}, {"task", {{"ttl", 60000}}}});
  ASSERT_TRUE(created["result"].contains("task")) << created;
  std::string id = created["result"]["task"]["taskId"];
  EXPECT_EQ(created["result"]["task"]["status"], "working");
  EXPECT_EQ(client.Call("tasks/get", {{"taskId", id}})["result"]["status"], "working");
  EXPECT_EQ(client.Call("tasks/list")["result"]["tasks"].size(), 1u);

  client.Send({{"jsonrpc", "2.0"}, {"id", "r"}, {"method", "tasks/result"}, {"params", {{"taskId", id}}}});
  release = true;
  json result = client.Reply("r");
  EXPECT_EQ(result["result"]["structuredContent"]["echo"]["x"], 1);
  EXPECT_EQ(result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id);
  EXPECT_EQ(client.Call("tasks/get", {{"taskId", id}})["result"]["status"], "completed");
}

TEST(Tasks, CancelAndTheSupportRules) {
  std::atomic<bool> release{false};
  Client client(TaskTools(release));
  client.Initialize();
  std::string id = client.Call("tools/call", {{"name", "job"}, {"task", json::object()}})["result"]["task"]["taskId"];
  EXPECT_EQ(client.Call("tasks/cancel", {{"taskId", id}})["result"]["status"], "cancelled");
  EXPECT_EQ(client.Call("tasks/cancel", {{"taskId", id}})["error"]["code"], -32602);  // already terminal
  EXPECT_EQ(client.Call("tasks/get", {{"taskId", "nope"}})["error"]["code"], -32602);
  EXPECT_EQ(client.Call("tools/call", {{"name", "plain"}, {"task", json::object()}})["error"]["code"], -32601);
  EXPECT_EQ(client.Call("tools/call", {{"name", "must_be_task"}})["error"]["code"], -32601);
  EXPECT_EQ(client.Call("tasks/list", {{"_meta", ModernMeta()}})["error"]["code"], -32601);  // legacy only
}

}  // namespace
}  // namespace parity::mcp::testing
