// libFuzzer target over the MCP message handler (Server::HandleRaw), the code every byte
// from stdio or an HTTP body reaches first. One input is one client session:
//   byte 0: bit 0 set = the messages arrive over HTTP, bit 1 set = with an
//           MCP-Protocol-Version: 2026-07-28 header (HTTP only);
//   the rest: messages separated by '\n', each handed to HandleRaw in order on a fresh
//           connection, so an initialize can precede the requests it unlocks.
// The catalog has a tool of each kind the protocol treats differently (text, structured,
// failing, eliciting, reporting progress), a prompt with a completer, a resource and a
// template. Handlers run synchronously (no worker threads) and server->client requests
// time out at once, so an input's run is deterministic.
// Beyond the sanitizers, every message the server sends is checked to be JSON-RPC 2.0:
// a request/notification with a method, or a response with an id and exactly one of
// result or error; a violation aborts, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

#include "mcp-server/server.h"

namespace {

using parity::mcp::json;
namespace mcp = parity::mcp;

[[noreturn]] void Violation(const char* what, const json& message) {
  std::fprintf(stderr, "mcp_message_fuzzer: %s: %s\n", what, message.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  std::abort();
}

// One message: a request/notification with a method, or a response with an id and
// exactly one of result or error.
void CheckMessage(const json& message) {
  if (!message.is_object()) Violation("sent a non-object", message);
  auto jsonrpc = message.find("jsonrpc");
  if (jsonrpc == message.end() || *jsonrpc != "2.0") Violation("sent a message without jsonrpc 2.0", message);
  if (message.contains("method")) {
    if (!message["method"].is_string()) Violation("sent a non-string method", message);
  } else {
    if (!message.contains("id")) Violation("sent a response without an id", message);
    const json& id = message["id"];
    if (!(id.is_null() || id.is_string() || id.is_number_integer())) Violation("sent a response with a bad id", message);
    if (message.contains("result") == message.contains("error")) Violation("sent a response without exactly one of result/error", message);
    if (message.contains("error")) {
      const json& error = message["error"];
      if (!error.is_object() || !error.contains("code") || !error["code"].is_number_integer() ||
          !error.contains("message") || !error["message"].is_string()) {
        Violation("sent a malformed error object", message);
      }
    }
  }
}

class CheckingSink final : public mcp::Sink {
 public:
  bool Send(const json& message) override {
    // A batch's responses go out as one JSON array (JSON-RPC 2.0 section 6): never empty,
    // and every element a response.
    if (message.is_array()) {
      if (message.empty()) Violation("sent an empty batch array", message);
      for (const json& element : message) {
        if (element.contains("method")) Violation("sent a request inside a batch response", message);
        CheckMessage(element);
      }
    } else {
      CheckMessage(message);
    }
    (void)mcp::DumpLine(message);  // what the stdio transport writes must serialize
    return true;
  }
};

mcp::Tool MakeTool(std::string name, json input_schema, mcp::ToolHandler handler, json output_schema = nullptr) {
  mcp::Tool tool;
  tool.spec.name = std::move(name);
  tool.spec.description = "fuzz fixture";
  tool.spec.input_schema = std::move(input_schema);
  tool.spec.output_schema = std::move(output_schema);
  tool.handler = std::move(handler);
  return tool;
}

std::shared_ptr<mcp::Catalog> MakeCatalog() {
  auto catalog = std::make_shared<mcp::Catalog>();
  catalog->tools.Add(MakeTool(
      "echo", {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}, {"required", {"text"}}},
      [](const json& args, mcp::ToolContext& ctx) {
        ctx.Progress(1, 2, "half");
        ctx.Log(mcp::LogLevel::kInfo, "fuzz", args);
        ctx.Progress(2, 2, "done");
        return mcp::ToolResult::Text(args.value("text", std::string()));
      }));
  catalog->tools.Add(MakeTool(
      "structured", {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}},
      [](const json& args, mcp::ToolContext&) { return mcp::ToolResult::Structured({{"n", args.value("n", 0)}}); },
      {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}}));
  catalog->tools.Add(MakeTool("fail", {{"type", "object"}}, [](const json&, mcp::ToolContext&) {
    return mcp::ToolResult::Error(parity::Status(parity::ErrorKind::kFailedPrecondition, "fuzz failure"));
  }));
  catalog->tools.Add(MakeTool("confirm", {{"type", "object"}}, [](const json&, mcp::ToolContext& ctx) {
    auto answer = ctx.Elicit("ok", "Proceed?", {{"type", "object"}, {"properties", {{"ok", {{"type", "boolean"}}}}}});
    if (!answer.ok()) return mcp::ToolResult::Error(answer.status());
    return mcp::ToolResult::Text(answer->action == mcp::ElicitAnswer::Action::kAccept ? "accepted" : "declined");
  }));

  mcp::Prompt prompt;
  prompt.spec.name = "greet";
  prompt.spec.description = "fuzz prompt";
  prompt.spec.arguments.push_back(
      {"who", "whom to greet", true, [](std::string_view value, const json&) {
         return std::vector<std::string>{std::string(value) + "1", "world"};
       }});
  prompt.handler = [](const json& args, mcp::ToolContext&) -> parity::Result<json> {
    return json{{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", args.value("who", "")}}}}}}};
  };
  catalog->prompts.Add(std::move(prompt));

  mcp::Resource resource;
  resource.spec = {"fuzz://static", "static", "", "fuzz resource", "text/plain"};
  resource.read = [](const std::string& uri, const std::map<std::string, std::string>&, mcp::ToolContext&)
      -> parity::Result<json> { return json::array({{{"uri", uri}, {"mimeType", "text/plain"}, {"text", "static"}}}); };
  catalog->resources.Add(std::move(resource));

  mcp::ResourceTemplate item;
  item.uri_template = "fuzz://item/{id}";
  item.name = "item";
  item.description = "fuzz template";
  item.mime_type = "application/json";
  item.read = [](const std::string& uri, const std::map<std::string, std::string>& vars, mcp::ToolContext&)
      -> parity::Result<json> {
    return json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", json(vars).dump()}}});
  };
  catalog->templates.Add(std::move(item));
  return catalog;
}

mcp::Server& TheServer() {
  static mcp::Server* server = [] {
    mcp::ServerOptions options;
    options.worker_threads = 0;
    options.page_size = 2;  // so that tools/list paginates
    options.client_request_timeout = std::chrono::milliseconds(1);
    options.min_progress_interval = std::chrono::milliseconds(0);
    options.report_dir = std::filesystem::temp_directory_path() / "parity-fuzz-report";
    return new mcp::Server(options, MakeCatalog());  // lives for the process
  }();
  return *server;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  mcp::Server& server = TheServer();
  auto sink = std::make_shared<CheckingSink>();
  mcp::Envelope envelope;
  envelope.connection = std::make_shared<mcp::Connection>(sink);
  envelope.sink = sink;
  envelope.http = (data[0] & 1) != 0;
  if (envelope.http && (data[0] & 2) != 0) envelope.header_version = "2026-07-28";

  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view message = rest.substr(0, newline);
    server.HandleRaw(message, envelope, /*max_bytes=*/4096);
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  server.WaitIdle();
  envelope.connection->Close();
  return 0;
}
