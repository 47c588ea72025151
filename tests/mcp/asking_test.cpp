// Asking the client: 2026-07-28 MRTR (input_required + signed requestState), the legacy
// server->client request, the confirmation fallback for clients that cannot elicit, and
// -32021 for a 2026-07-28 client that lacks the capability.
#include <gtest/gtest.h>

#include <thread>

#include "tests/mcp/harness.h"

namespace parity::mcp::testing {
namespace {

json ConfirmSchema() { return {{"type", "object"}, {"properties", {{"ok", {{"type", "boolean"}}}}}}; }

// Asks two questions in turn; answers "confirmed <a> <b>".
std::shared_ptr<Catalog> Asking(json output_schema = nullptr) {
  auto c = std::make_shared<Catalog>();
  c->tools.Add(MakeTool("deploy", [](const json& args, ToolContext& ctx) {
    auto first = ctx.Elicit("first", "Go ahead with " + args.value("target", std::string("?")) + "?", ConfirmSchema());
    if (!first.ok()) return ToolResult::Error(first.status());
    auto second = ctx.Elicit("second", "Really?", ConfirmSchema());
    if (!second.ok()) return ToolResult::Error(second.status());
    return ToolResult::Text("confirmed " + first->content.dump() + " " + second->content.dump());
  }, std::move(output_schema)));
  c->tools.Add(MakeTool("ask_model", [](const json&, ToolContext& ctx) {
    auto r = ctx.Sample("q", {{"messages", json::array()}, {"maxTokens", 5}});
    if (!r.ok()) return ToolResult::Error(r.status());
    return ToolResult::Text("model said " + (*r)["content"]["text"].get<std::string>());
  }));
  return c;
}

json Accept(bool ok) { return {{"action", "accept"}, {"content", {{"ok", ok}}}}; }

json ModernCall(Client& client, json arguments, json extra = json::object()) {
  json params = {{"name", "deploy"}, {"arguments", std::move(arguments)},
                 {"_meta", ModernMeta({{"elicitation", json::object()}})}};
  for (auto& [k, v] : extra.items()) params[k] = v;
  return client.Call("tools/call", params);
}

TEST(Mrtr, InputRequiredRoundsCarryEarlierAnswersInTheSignedState) {
  Client client(Asking());
  json args = {{"target", "prod"}};
  json r1 = ModernCall(client, args);
  ASSERT_EQ(r1["result"]["resultType"], "input_required") << r1;
  EXPECT_EQ(r1["result"]["inputRequests"]["first"]["method"], "elicitation/create");
  std::string state1 = r1["result"]["requestState"];

  json r2 = ModernCall(client, args, {{"inputResponses", {{"first", Accept(true)}}}, {"requestState", state1}});
  ASSERT_EQ(r2["result"]["resultType"], "input_required") << r2;
  EXPECT_TRUE(r2["result"]["inputRequests"].contains("second"));
  EXPECT_FALSE(r2["result"]["inputRequests"].contains("first"));

  // Round 3 sends only the newest answer: the first one travels in requestState.
  json r3 = ModernCall(client, args,
                       {{"inputResponses", {{"second", Accept(false)}}}, {"requestState", r2["result"]["requestState"]}});
  ASSERT_EQ(r3["result"]["resultType"], "complete") << r3;
  EXPECT_EQ(r3["result"]["content"][0]["text"], "confirmed {\"ok\":true} {\"ok\":false}");
}

TEST(Mrtr, TamperedOrMisboundStateIsRejected) {
  Client client(Asking());
  json args = {{"target", "prod"}};
  std::string state = ModernCall(client, args)["result"]["requestState"];
  json tampered = ModernCall(client, args, {{"inputResponses", {{"first", Accept(true)}}}, {"requestState", state + "x"}});
  EXPECT_EQ(tampered["error"]["code"], -32602);
  std::string flipped = state;
  flipped[3] = flipped[3] == 'A' ? 'B' : 'A';
  EXPECT_EQ(ModernCall(client, args, {{"requestState", flipped}})["error"]["code"], -32602);
  // Same token, other arguments: bound to the arguments digest.
  json other = ModernCall(client, {{"target", "staging"}}, {{"requestState", state}});
  EXPECT_EQ(other["error"]["code"], -32602);
  EXPECT_NE(other["error"]["message"].get<std::string>().find("different request"), std::string::npos);
}

TEST(Mrtr, MissingCapabilityIsMinus32021) {
  Client client(Asking());
  json r = client.Call("tools/call", {{"name", "ask_model"}, {"_meta", ModernMeta()}});
  EXPECT_EQ(r["error"]["code"], -32021);
  EXPECT_TRUE(r["error"]["data"]["requiredCapabilities"]["sampling"].is_object());
}

TEST(Legacy, ElicitationIsAServerToClientRequest) {
  Client client(Asking());
  client.Initialize({{"elicitation", json::object()}});
  client.Send({{"jsonrpc", "2.0"}, {"id", "call"}, {"method", "tools/call"},
               {"params", {{"name", "deploy"}, {"arguments", {{"target", "prod"}}}}}});
  for (const char* expected : {"Go ahead with prod?", "Really?"}) {
    json request = client.sink->WaitFor([&](const json& m) {
      return m.value("method", "") == "elicitation/create" && m["params"]["message"] == expected;
    });
    ASSERT_FALSE(request.is_null()) << expected;
    client.Send({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", Accept(true)}});
  }
  EXPECT_EQ(client.Reply("call")["result"]["content"][0]["text"], "confirmed {\"ok\":true} {\"ok\":true}");
}

TEST(Legacy, AClientErrorReachesTheTool) {
  Client client(Asking());
  client.Initialize({{"sampling", json::object()}});
  client.Send({{"jsonrpc", "2.0"}, {"id", "s"}, {"method", "tools/call"}, {"params", {{"name", "ask_model"}}}});
  json request = client.sink->WaitFor([](const json& m) { return m.value("method", "") == "sampling/createMessage"; });
  ASSERT_FALSE(request.is_null());
  client.Send({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"error", {{"code", -1}, {"message", "user said no"}}}});
  json r = client.Reply("s");
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("user said no"), std::string::npos);
}

TEST(Fallback, ConfirmationRoundTripForAClientThatCannotElicit) {
  Client client(Asking());
  client.Initialize();  // no elicitation capability
  json args = {{"target", "prod"}};
  json r1 = client.Call("tools/call", {{"name", "deploy"}, {"arguments", args}});
  json c1 = r1["result"]["structuredContent"];
  ASSERT_EQ(c1["status"], "confirmation_required") << r1;
  EXPECT_EQ(c1["confirmations"][0]["key"], "first");
  EXPECT_EQ(c1["confirmations"][0]["message"], "Go ahead with prod?");

  args["confirmations"] = {{"token", c1["confirmation_token"]}, {"answers", {{"first", Accept(true)}}}};
  json c2 = client.Call("tools/call", {{"name", "deploy"}, {"arguments", args}})["result"]["structuredContent"];
  ASSERT_EQ(c2["status"], "confirmation_required");
  EXPECT_EQ(c2["confirmations"][0]["key"], "second");

  args["confirmations"] = {{"token", c2["confirmation_token"]}, {"answers", {{"second", Accept(true)}}}};
  json done = client.Call("tools/call", {{"name", "deploy"}, {"arguments", args}});
  EXPECT_EQ(done["result"]["content"][0]["text"], "confirmed {\"ok\":true} {\"ok\":true}");
  EXPECT_FALSE(done["result"].contains("isError"));

  args["confirmations"] = {{"token", "forged.token"}, {"answers", {{"second", Accept(true)}}}};
  json forged = client.Call("tools/call", {{"name", "deploy"}, {"arguments", args}});
  EXPECT_EQ(forged["result"]["isError"], true);
}

TEST(Fallback, ToolsWithAnOutputSchemaGetItAsText) {
  Client client(Asking({{"type", "object"}, {"properties", {{"x", {{"type", "string"}}}}}, {"required", {"x"}}}));
  client.Initialize();
  json r = client.Call("tools/call", {{"name", "deploy"}, {"arguments", json::object()}});
  EXPECT_EQ(r["result"]["isError"], true);
  EXPECT_FALSE(r["result"].contains("structuredContent"));
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("confirmation_token"), std::string::npos);
}

}  // namespace
}  // namespace parity::mcp::testing
