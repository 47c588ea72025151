// The dispatcher over the in-memory transport: handshakes of both eras, era selection,
// JSON-RPC errors, pagination, logging, cancellation, progress and the busy answer.
#include <set>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "mcp-server/invoke.h"
#include "mcp-server/result_pages.h"
#include "tests/common/temp_dir.h"
#include "tests/mcp/harness.h"

namespace parity::mcp::testing {
namespace {

std::shared_ptr<Catalog> OneTool() {
  auto c = std::make_shared<Catalog>();
  c->tools.Add(MakeTool("echo", [](const json& args, ToolContext&) { return ToolResult::Structured(args); }));
  return c;
}

TEST(Handshake, LegacyEchoesASupportedVersion) {
  for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}) {
    Client client(OneTool());
    json r = client.Initialize(json::object(), v);
    EXPECT_EQ(r["result"]["protocolVersion"], v);
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    EXPECT_TRUE(r["result"]["capabilities"].contains("logging"));
    EXPECT_FALSE(r["result"].contains("resultType"));  // legacy results carry no resultType
  }
}

TEST(Handshake, LegacyAnswersTheLatestForAnUnknownVersion) {
  Client client(OneTool());
  EXPECT_EQ(client.Initialize(json::object(), "1999-01-01")["result"]["protocolVersion"], "2025-11-25");
}

TEST(Handshake, ModernDiscover) {
  Client client(OneTool());
  json r = client.Call("server/discover", {{"_meta", ModernMeta()}});
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["supportedVersions"], json::array({"2026-07-28"}));
  EXPECT_TRUE(r["result"]["ttlMs"].is_number_integer());
  EXPECT_EQ(r["result"]["cacheScope"], "public");
  EXPECT_EQ(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "parity");
}

TEST(Era, ModernMetaSelectsStatelessServing) {
  Client client(OneTool());
  json modern = client.Call("tools/list", {{"_meta", ModernMeta()}});
  EXPECT_EQ(modern["result"]["resultType"], "complete");
  EXPECT_EQ(modern["result"]["cacheScope"], "public");
  json legacy = client.Call("tools/list");
  EXPECT_FALSE(legacy["result"].contains("resultType"));
}

TEST(Era, LegacyOnlyMethodsAreUnknownInTheModernEra) {
  Client client(OneTool());
  for (const char* m : {"initialize", "ping", "logging/setLevel", "resources/subscribe"}) {
    json r = client.Call(m, {{"_meta", ModernMeta()}});
    EXPECT_EQ(r["error"]["code"], -32601) << m;
  }
}

TEST(Era, ModernRequestsNeedTheirMeta) {
  Client client(OneTool());
  json r = client.Call("server/discover", json::object());
  EXPECT_EQ(r["error"]["code"], -32602);
  json meta = ModernMeta();
  meta.erase("io.modelcontextprotocol/clientCapabilities");
  r = client.Call("tools/list", {{"_meta", meta}});
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("clientCapabilities"), std::string::npos);
}

TEST(Era, UnsupportedModernVersion) {
  Client client(OneTool());
  json meta = ModernMeta();
  meta["io.modelcontextprotocol/protocolVersion"] = "2099-01-01";
  json r = client.Call("server/discover", {{"_meta", meta}});
  EXPECT_EQ(r["error"]["code"], -32022);
  EXPECT_EQ(r["error"]["data"]["requested"], "2099-01-01");
  EXPECT_EQ(r["error"]["data"]["supported"], json::array({"2026-07-28"}));
}

TEST(Errors, ParseErrorHasNullId) {
  Client client(OneTool());
  client.SendRaw("{not json");
  json r = client.sink->WaitFor([](const json& m) { return m.contains("error"); });
  EXPECT_EQ(r["error"]["code"], -32700);
  EXPECT_TRUE(r["id"].is_null());
}

TEST(Errors, InvalidRequestKeepsTheIdWhenReadable) {
  Client client(OneTool());
  client.SendRaw(R"({"jsonrpc":"1.0","id":7,"method":"ping"})");
  json r = client.Reply(7);
  EXPECT_EQ(r["error"]["code"], -32600);
  client.SendRaw(R"({"jsonrpc":"2.0","id":8,"method":"ping","params":[1]})");
  EXPECT_EQ(client.Reply(8)["error"]["code"], -32600);
  client.SendRaw("[]");
  EXPECT_EQ(client.sink->WaitFor([](const json& m) { return m.contains("error") && m["id"].is_null() &&
                                                            m["error"]["message"].get<std::string>().find("batch") !=
                                                                std::string::npos; })["error"]["code"],
            -32600);
}

TEST(Errors, UnknownMethod) {
  Client client(OneTool());
  EXPECT_EQ(client.Call("no/such")["error"]["code"], -32601);
}

TEST(Errors, WrongParamTypesNameTheJsonPath) {
  Client client(OneTool());
  json r = client.Call("tools/call", {{"name", 42}});
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("params.name"), std::string::npos);
  r = client.Call("tools/call", {{"name", "echo"}, {"arguments", "x"}});
  EXPECT_NE(r["error"]["message"].get<std::string>().find("params.arguments"), std::string::npos);
  r = client.Call("tools/call", {{"name", "nope"}});
  EXPECT_EQ(r["error"]["code"], -32602);
  r = client.Call("logging/setLevel", {{"level", "loud"}});
  EXPECT_NE(r["error"]["message"].get<std::string>().find("params.level"), std::string::npos);
}

TEST(Errors, BatchesOnlyOnA2025_03_26Session) {
  Client client(OneTool());
  client.Initialize();
  client.SendRaw(R"([{"jsonrpc":"2.0","id":"b1","method":"ping"}])");
  json r = client.sink->WaitFor([](const json& m) { return m.contains("error") && m["id"].is_null(); });
  EXPECT_EQ(r["error"]["code"], -32600);

  Client old(OneTool());
  old.Initialize(json::object(), "2025-03-26");
  old.SendRaw(R"([{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}])");
  // JSON-RPC 2.0: a batch is answered by one array holding every reply.
  json batch = old.sink->WaitFor([](const json& m) { return m.is_array(); });
  ASSERT_TRUE(batch.is_array()) << batch.dump();
  ASSERT_EQ(batch.size(), 2u) << batch.dump();
  std::set<std::string> ids;
  for (const auto& reply : batch) {
    EXPECT_TRUE(reply.contains("result")) << reply.dump();
    ids.insert(reply.value("id", ""));
  }
  EXPECT_EQ(ids, (std::set<std::string>{"b1", "b2"}));
}

TEST(Pagination, OpaqueCursorsWalkTheWholeList) {
  auto catalog = std::make_shared<Catalog>();
  for (int i = 0; i < 5; ++i) {
    catalog->tools.Add(MakeTool("t" + std::to_string(i), [](const json&, ToolContext&) { return ToolResult::Text(""); }));
  }
  ServerOptions options;
  options.page_size = 2;
  Client client(catalog, options);
  std::vector<std::string> names;
  json params = json::object();
  int pages = 0;
  for (;;) {
    json r = client.Call("tools/list", params);
    ASSERT_TRUE(r.contains("result")) << r;
    ++pages;
    for (const auto& t : r["result"]["tools"]) names.push_back(t["name"]);
    if (!r["result"].contains("nextCursor")) break;
    params = {{"cursor", r["result"]["nextCursor"]}};
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));
  EXPECT_EQ(client.Call("tools/list", {{"cursor", "bogus!"}})["error"]["code"], -32602);
}

TEST(Logging, SetLevelFiltersMessages) {
  auto catalog = std::make_shared<Catalog>();
  catalog->tools.Add(MakeTool("talk", [](const json&, ToolContext& ctx) {
    ctx.Log(LogLevel::kInfo, "t", "info message");
    ctx.Log(LogLevel::kError, "t", "error message");
    return ToolResult::Text("done");
  }));
  Client client(catalog);
  client.Initialize();
  EXPECT_TRUE(client.Call("logging/setLevel", {{"level", "warning"}})["result"].empty());
  client.Call("tools/call", {{"name", "talk"}});
  std::vector<std::string> logged;
  for (const auto& m : client.sink->messages()) {
    if (m.value("method", "") == "notifications/message") logged.push_back(m["params"]["data"]);
  }
  EXPECT_EQ(logged, std::vector<std::string>{"error message"});
}

TEST(Logging, ModernSendsLogsOnlyWithALogLevel) {
  auto catalog = std::make_shared<Catalog>();
  catalog->tools.Add(MakeTool("talk", [](const json&, ToolContext& ctx) {
    ctx.Log(LogLevel::kInfo, "t", "hello");
    return ToolResult::Text("done");
  }));
  Client client(catalog);
  client.Call("tools/call", {{"name", "talk"}, {"_meta", ModernMeta()}});
  for (const auto& m : client.sink->messages()) EXPECT_NE(m.value("method", ""), "notifications/message");
  json meta = ModernMeta();
  meta["io.modelcontextprotocol/logLevel"] = "info";
  client.Call("tools/call", {{"name", "talk"}, {"_meta", meta}});
  EXPECT_FALSE(client.sink->WaitFor([](const json& m) { return m.value("method", "") == "notifications/message"; })
                   .is_null());
}

TEST(Cancellation, ACancelledRequestGetsNoReply) {
  std::atomic<bool> started{false}, saw_cancel{false};
  auto catalog = std::make_shared<Catalog>();
  catalog->tools.Add(MakeTool("wait", [&](const json&, ToolContext& ctx) {
    started = true;
    while (!ctx.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    saw_cancel = true;
    return ToolResult::Text("finished anyway");
  }));
  Client client(catalog);
  client.Initialize();
  client.Send({{"jsonrpc", "2.0"}, {"id", "slow"}, {"method", "tools/call"}, {"params", {{"name", "wait"}}}});
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  client.Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", "slow"}}}});
  client.server->WaitIdle();
  EXPECT_TRUE(saw_cancel);
  for (const auto& m : client.sink->messages()) EXPECT_NE(m.value("id", json()), json("slow")) << m;
  EXPECT_TRUE(client.Call("ping").contains("result"));  // and the server goes on
}

TEST(Progress, OnlyWithATokenAndOnlyIncreasing) {
  auto catalog = std::make_shared<Catalog>();
  catalog->tools.Add(MakeTool("steps", [](const json&, ToolContext& ctx) {
    for (double v : {1.0, 3.0, 2.0, 3.0, 5.0}) ctx.Progress(v, 5, "");
    return ToolResult::Text("done");
  }));
  ServerOptions options;
  options.min_progress_interval = std::chrono::milliseconds(0);
  Client client(catalog, options);
  client.Initialize();
  client.Call("tools/call", {{"name", "steps"}});
  for (const auto& m : client.sink->messages()) EXPECT_NE(m.value("method", ""), "notifications/progress");
  client.Call("tools/call", {{"name", "steps"}, {"_meta", {{"progressToken", "p1"}}}});
  std::vector<double> seen;
  for (const auto& m : client.sink->messages()) {
    if (m.value("method", "") != "notifications/progress") continue;
    EXPECT_EQ(m["params"]["progressToken"], "p1");
    seen.push_back(m["params"]["progress"]);
  }
  EXPECT_EQ(seen, (std::vector<double>{1, 3, 5}));
}

TEST(WorkerPool, AFullPoolAnswersARetryableError) {
  std::atomic<bool> release{false}, started{false};
  auto catalog = std::make_shared<Catalog>();
  catalog->tools.Add(MakeTool("block", [&](const json&, ToolContext&) {
    started = true;
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return ToolResult::Text("released");
  }));
  ServerOptions options;
  options.worker_threads = 1;
  options.max_queued = 0;
  Client client(catalog, options);
  client.Initialize();
  client.Send({{"jsonrpc", "2.0"}, {"id", "a"}, {"method", "tools/call"}, {"params", {{"name", "block"}}}});
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  json busy = client.Call("tools/call", {{"name", "block"}});
  EXPECT_EQ(busy["error"]["code"], -32000);
  EXPECT_EQ(busy["error"]["data"]["retryable"], true);
  release = true;
  EXPECT_TRUE(client.Reply("a").contains("result"));
}

TEST(Tools, StructuredContentAndErrorsAsResults) {
  auto catalog = std::make_shared<Catalog>();
  json schema = {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}};
  catalog->tools.Add(MakeTool("typed", [](const json& args, ToolContext&) {
    if (!args.contains("n")) return ToolResult::Error(InvalidArgument("arguments.n: required field is missing"));
    return ToolResult::Structured({{"n", args["n"]}});
  }, schema));
  Client client(catalog);
  client.Initialize();
  json ok = client.Call("tools/call", {{"name", "typed"}, {"arguments", {{"n", 3}}}});
  EXPECT_EQ(ok["result"]["structuredContent"]["n"], 3);
  json bad = client.Call("tools/call", {{"name", "typed"}, {"arguments", json::object()}});
  EXPECT_EQ(bad["result"]["isError"], true);
  EXPECT_NE(bad["result"]["content"][0]["text"].get<std::string>().find("arguments.n"), std::string::npos);
  // A strict client validates structuredContent against outputSchema: errors carry none.
  EXPECT_FALSE(bad["result"].contains("structuredContent"));
}

TEST(Tools, AResultOverTheCapIsAnErrorNamingItsSizeNeverACutResult) {
  auto catalog = std::make_shared<Catalog>();
  json schema = {{"type", "object"}, {"properties", {{"rows", {{"type", "array"}}}}}};
  catalog->tools.Add(MakeTool("rows", [](const json& args, ToolContext&) {
    json rows = json::array();
    for (int i = 0; i < args.value("n", 0); ++i) rows.push_back(std::string(100, 'x'));
    return ToolResult::Structured({{"rows", rows}});
  }, schema));
  Client client(catalog);
  client.Initialize();
  // Just under: sent whole (the text copy and the structured copy count together).
  const int under = static_cast<int>(kMaxToolResultBytes / 230);  // ~214 bytes a row, both copies
  json ok = client.Call("tools/call", {{"name", "rows"}, {"arguments", {{"n", under}}}});
  ASSERT_FALSE(ok["result"].value("isError", false)) << ok.dump().substr(0, 500);
  EXPECT_EQ(ok["result"]["structuredContent"]["rows"].size(), static_cast<size_t>(under));
  json big = client.Call("tools/call", {{"name", "rows"}, {"arguments", {{"n", 5000}}}});
  EXPECT_EQ(big["result"]["isError"], true);
  const std::string text = big["result"]["content"][0]["text"];
  EXPECT_NE(text.find("the result of rows is"), std::string::npos) << text;
  EXPECT_NE(text.find("over the cap of " + std::to_string(kMaxToolResultBytes)), std::string::npos) << text;
  EXPECT_FALSE(big["result"].contains("structuredContent"));
  EXPECT_LT(big.dump().size(), 4096u);
}

TEST(Tools, AResultOverTheCapIsKeptInTheReportDirectoryAndReadInPages) {
  parity::testing_support::TempDir dir;
  auto catalog = std::make_shared<Catalog>();
  json schema = {{"type", "object"}, {"properties", {{"rows", {{"type", "array"}}}}}};
  catalog->tools.Add(MakeTool("rows", [](const json& args, ToolContext&) {
    json rows = json::array();
    // Three-byte characters and an odd row length: page cuts fall inside sequences.
    for (int i = 0; i < args.value("n", 0); ++i) rows.push_back(std::to_string(i) + std::string(7, 'x') + "\u4e2d\u6587");
    return ToolResult::Structured({{"rows", rows}});
  }, schema));
  catalog->templates.Add(MakeResultPagesTemplate());
  ServerOptions options;
  options.report_dir = dir.path();
  auto policy = std::make_shared<policy::Policy>();
  policy->AddFolder(dir.path(), true, "test");
  options.policy = policy;
  Client client(catalog, options);
  client.Initialize();
  json big = client.Call("tools/call", {{"name", "rows"}, {"arguments", {{"n", 30000}}}});
  ASSERT_EQ(big["result"]["isError"], true) << big.dump().substr(0, 500);
  const std::string text = big["result"]["content"][0]["text"];
  EXPECT_NE(text.find("over the cap of " + std::to_string(kMaxToolResultBytes)), std::string::npos) << text;
  EXPECT_NE(text.find((dir.path() / "results").string()), std::string::npos) << text;
  EXPECT_FALSE(big["result"].contains("structuredContent"));
  std::vector<std::string> uris;
  for (const auto& c : big["result"]["content"]) {
    if (c["type"] == "resource_link") uris.push_back(c["uri"]);
  }
  ASSERT_GT(uris.size(), 4u);  // 30000 rows of ~20 bytes, twice: well over 4 pages of 64 KiB
  std::string joined;
  for (const auto& uri : uris) {
    json page = client.Call("resources/read", {{"uri", uri}});
    ASSERT_TRUE(page.contains("result")) << page.dump().substr(0, 500);
    joined += page["result"]["contents"][0]["text"].get<std::string>();
  }
  // The pages end to end are the result as it would have been sent.
  const json whole = json::parse(joined);
  ASSERT_EQ(whole["structuredContent"]["rows"].size(), 30000u);
  EXPECT_EQ(whole["structuredContent"]["rows"][29999], "29999xxxxxxx\u4e2d\u6587");
  // Past the last page, and a name the server did not write, are errors.
  const std::string file = uris[0].substr(std::string("parity://report/results/").size(), uris[0].rfind('/') -
                                                                                            std::string("parity://report/results/").size());
  json past = client.Call("resources/read", {{"uri", "parity://report/results/" + file + "/" + std::to_string(uris.size())}});
  EXPECT_TRUE(past.contains("error")) << past.dump();
  json other = client.Call("resources/read", {{"uri", "parity://report/results/..%2Fsecret.json/0"}});
  EXPECT_TRUE(other.contains("error")) << other.dump();
}

TEST(Tools, ResultPagesAreCutOnlyBetweenUtf8Characters) {
  parity::testing_support::TempDir dir;
  policy::Policy policy;
  policy.AddFolder(dir.path(), true, "test");
  // A three-byte character across the first page's end, and a second page of one byte.
  const std::string text = std::string(kResultPageBytes - 1, 'a') + "\u4e2d" + "b";
  auto spilled = SpillResult(dir.path(), policy, "odd tool/name", text);
  ASSERT_TRUE(spilled.ok()) << spilled.status().ToString();
  EXPECT_EQ(spilled->pages, 2u);
  EXPECT_EQ(spilled->file.rfind("odd_tool_name-", 0), 0u) << spilled->file;
  auto first = ReadResultPage(dir.path(), spilled->file, 0);
  auto second = ReadResultPage(dir.path(), spilled->file, 1);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->substr(first->size() - 3), "\u4e2d");
  EXPECT_EQ(*second, "b");
  EXPECT_EQ(*first + *second, text);
  EXPECT_FALSE(ReadResultPage(dir.path(), spilled->file, 2).ok());
  // Nobody else's file, and no write where the policy does not allow it.
  EXPECT_FALSE(ReadResultPage(dir.path(), "../" + spilled->file, 0).ok());
  EXPECT_FALSE(SpillResult(dir.path(), policy::Policy(), "t", text).ok());
}

TEST(Tools, ListChangedReachesLegacyConnections) {
  Client client(OneTool());
  client.Initialize();
  auto unsolicited = std::make_shared<CaptureSink>();
  client.connection->SetUnsolicitedSink(unsolicited);
  client.catalog->tools.Add(MakeTool("late", [](const json&, ToolContext&) { return ToolResult::Text(""); }));
  EXPECT_FALSE(unsolicited->WaitFor([](const json& m) {
    return m.value("method", "") == "notifications/tools/list_changed";
  }).is_null());
}

}  // namespace
}  // namespace parity::mcp::testing
