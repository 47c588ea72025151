// The two transports over real file descriptors and a real loopback socket.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <thread>

#include "mcp-server/http_transport.h"
#include "mcp-server/stdio_transport.h"
#include "tests/mcp/harness.h"

namespace parity::mcp::testing {
namespace {

std::shared_ptr<Catalog> EchoCatalog() {
  auto c = std::make_shared<Catalog>();
  c->tools.Add(MakeTool("echo", [](const json& args, ToolContext&) { return ToolResult::Structured(args); }));
  c->tools.Add(MakeTool("slow_progress", [](const json&, ToolContext& ctx) {
    for (int i = 1; i <= 3; ++i) {
      ctx.Progress(i, 3, "step");
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    return ToolResult::Text("done");
  }));
  return c;
}

std::vector<json> ReadLines(int fd) {
  std::string all;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) all.append(buf, static_cast<size_t>(n));
  std::vector<json> out;
  size_t start = 0, nl;
  while ((nl = all.find('\n', start)) != std::string::npos) {
    out.push_back(json::parse(all.substr(start, nl - start)));
    start = nl + 1;
  }
  return out;
}

TEST(Stdio, OversizedLineIsAnsweredAndServingGoesOn) {
  int in[2], out[2];
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  Server server(ServerOptions{}, EchoCatalog());
  StdioTransport transport(in[0], out[1], /*max_line_bytes=*/1024);
  std::thread serving([&] { EXPECT_TRUE(transport.Serve(server).ok()); ::close(out[1]); });
  std::string input = std::string(5000, 'x') + "\n" + R"({"jsonrpc":"2.0","id":1,"method":"ping"})" + "\n" +
                      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}})" +
                      "\n";
  ASSERT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(in[1]);  // EOF: the transport finishes in-flight work and returns
  std::vector<json> lines = ReadLines(out[0]);
  serving.join();
  ::close(in[0]);
  ::close(out[0]);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["error"]["code"], -32600);
  EXPECT_TRUE(lines[0]["id"].is_null());
  bool saw_ping = false, saw_echo = false;
  for (const auto& l : lines) {
    if (l["id"] == 1) saw_ping = l.contains("result");
    if (l["id"] == 2) saw_echo = l["result"]["structuredContent"]["a"] == 1;
  }
  EXPECT_TRUE(saw_ping);
  EXPECT_TRUE(saw_echo);
}

class Http : public ::testing::Test {
 protected:
  void Start(HttpOptions options = {}) {
    options.port = 0;
    transport_ = std::make_unique<HttpTransport>(options);
    ASSERT_TRUE(transport_->Bind().ok());
    serving_ = std::thread([this] { transport_->Serve(server_); });
    while (!transport_->running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    client_ = std::make_unique<httplib::Client>("127.0.0.1", transport_->port());
  }
  void TearDown() override {
    if (transport_) transport_->Stop();
    if (serving_.joinable()) serving_.join();
  }
  httplib::Result Post(const json& body, httplib::Headers headers = {}) {
    headers.emplace("Accept", "application/json, text/event-stream");
    return client_->Post("/mcp", headers, body.dump(), "application/json");
  }
  std::string Initialize() {
    auto r = Post({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                   {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                               {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
    EXPECT_EQ(r->status, 200);
    return r->get_header_value("Mcp-Session-Id");
  }

  std::shared_ptr<Catalog> catalog_ = EchoCatalog();
  Server server_{ServerOptions{}, catalog_};
  std::unique_ptr<HttpTransport> transport_;
  std::thread serving_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(Http, LegacySessions) {
  Start();
  std::string sid = Initialize();
  ASSERT_FALSE(sid.empty());
  json list = {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}};
  EXPECT_EQ(Post(list)->status, 400);  // no session id
  EXPECT_EQ(Post(list, {{"Mcp-Session-Id", "unknown"}})->status, 404);
  auto ok = Post(list, {{"Mcp-Session-Id", sid}, {"MCP-Protocol-Version", "2025-11-25"}});
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["result"]["tools"].size(), 2u);
  EXPECT_EQ(Post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, {{"Mcp-Session-Id", sid}})->status, 202);
  EXPECT_EQ(Post(list, {{"Mcp-Session-Id", sid}, {"MCP-Protocol-Version", "1999-01-01"}})->status, 400);
  EXPECT_EQ(client_->Delete("/mcp", {{"Mcp-Session-Id", sid}})->status, 200);
  EXPECT_EQ(Post(list, {{"Mcp-Session-Id", sid}})->status, 404);  // ended
  EXPECT_EQ(client_->Get("/mcp")->status, 405);
}

TEST_F(Http, SessionStreamCarriesListChanged) {
  Start();
  std::string sid = Initialize();
  std::string received;
  std::thread listener([&] {
    httplib::Client c("127.0.0.1", transport_->port());
    c.Get("/mcp", {{"Mcp-Session-Id", sid}, {"Accept", "text/event-stream"}}, [&](const char* data, size_t n) {
      received.append(data, n);
      return received.find("list_changed") == std::string::npos;  // stop once it arrived
    });
  });
  // The stream is registered when the GET arrives; keep changing the list until it is seen.
  for (int i = 0; i < 200 && listener.joinable(); ++i) {
    catalog_->tools.Add(MakeTool("late" + std::to_string(i), [](const json&, ToolContext&) { return ToolResult::Text(""); }));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (received.find("list_changed") != std::string::npos) break;
  }
  listener.join();
  EXPECT_NE(received.find("notifications/tools/list_changed"), std::string::npos) << received;
}

TEST_F(Http, ProgressStreamsAsSse) {
  Start();
  std::string sid = Initialize();
  auto r = Post({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/call"},
                 {"params", {{"name", "slow_progress"}, {"_meta", {{"progressToken", 9}}}}}},
                {{"Mcp-Session-Id", sid}});
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  size_t progress = 0, pos = 0;
  while ((pos = r->body.find("notifications/progress", pos)) != std::string::npos) ++progress, ++pos;
  EXPECT_EQ(progress, 3u);
  EXPECT_NE(r->body.find("\"id\":3"), std::string::npos);
}

TEST_F(Http, ModernIsStatelessWithHeaderChecks) {
  Start();
  json meta = ModernMeta();
  json call = {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "tools/call"},
               {"params", {{"name", "echo"}, {"arguments", {{"x", 1}}}, {"_meta", meta}}}};
  httplib::Headers headers = {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "echo"}};
  auto ok = Post(call, headers);
  ASSERT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["result"]["resultType"], "complete");
  auto mismatch = Post(call, {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "other"}});
  EXPECT_EQ(mismatch->status, 400);
  EXPECT_EQ(json::parse(mismatch->body)["error"]["code"], -32020);
  json unknown = {{"jsonrpc", "2.0"}, {"id", 6}, {"method", "nope"}, {"params", {{"_meta", meta}}}};
  auto r = Post(unknown, {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "nope"}});
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], -32601);
}

TEST_F(Http, ForeignHostOrOriginIsForbidden) {
  Start();
  EXPECT_EQ(Post(json::object(), {{"Origin", "http://evil.example.com"}})->status, 403);
  httplib::Client evil("127.0.0.1", transport_->port());
  auto r = evil.Post("/mcp", {{"Host", "evil.example.com"}}, "{}", "application/json");
  EXPECT_EQ(r->status, 403);
}

TEST_F(Http, BearerTokenIsRequiredWhenConfigured) {
  HttpOptions options;
  options.bearer_tokens = {"s3cret"};
  Start(options);
  json ping = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
               {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()}}}};
  auto missing = Post(ping);
  EXPECT_EQ(missing->status, 401);
  EXPECT_NE(missing->get_header_value("WWW-Authenticate").find("Bearer"), std::string::npos);
  EXPECT_EQ(Post(ping, {{"Authorization", "Bearer wrong!"}})->status, 401);
  EXPECT_EQ(Post(ping, {{"Authorization", "Bearer s3cret"}})->status, 200);
}

TEST_F(Http, BodyLimitAndMalformedJson) {
  HttpOptions options;
  options.max_body_bytes = 1024;
  Start(options);
  auto big = client_->Post("/mcp", std::string(4096, ' '), "application/json");
  EXPECT_EQ(big->status, 413);
  auto bad = client_->Post("/mcp", "{nope", "application/json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["error"]["code"], -32700);
}

}  // namespace
}  // namespace parity::mcp::testing
