#include "tests/conformance/fixtures.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace parity::conformance {

namespace {

using mcp::json;
using mcp::ToolContext;
using mcp::ToolResult;

constexpr const char* kImage =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
constexpr const char* kAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

json NoArgs() { return {{"type", "object"}, {"properties", json::object()}}; }

json StringArg(const char* name, const char* description) {
  return {{"type", "object"},
          {"properties", {{name, {{"type", "string"}, {"description", description}}}}},
          {"required", {name}}};
}

mcp::Tool MakeTool(std::string name, std::string description, json input_schema,
                   std::function<ToolResult(const json&, ToolContext&)> handler) {
  mcp::Tool t;
  t.spec.name = std::move(name);
  t.spec.description = std::move(description);
  t.spec.input_schema = std::move(input_schema);
  t.handler = std::move(handler);
  return t;
}

ToolResult Blocks(json content) {
  ToolResult r;
  r.content = std::move(content);
  return r;
}

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

json ElicitParams(const std::string& field, const std::string& type) {
  return {{"type", "object"}, {"properties", {{field, {{"type", type}}}}}, {"required", {field}}};
}

json SamplingParams(const std::string& text, int max_tokens) {
  json message = {{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}};
  return {{"messages", json::array({message})}, {"maxTokens", max_tokens}};
}

std::string Field(const mcp::ElicitAnswer& a, const std::string& key) {
  return a.content.is_object() && a.content.contains(key) && a.content[key].is_string() ? a.content[key].get<std::string>()
                                                                                          : "unknown";
}

std::string ActionName(mcp::ElicitAnswer::Action a) {
  return a == mcp::ElicitAnswer::Action::kAccept ? "accept" : a == mcp::ElicitAnswer::Action::kDecline ? "decline"
                                                                                                         : "cancel";
}

// Waiting for the client's answer (MRTR / confirmation) ends the handler early.
ToolResult Waiting(const Status& s) { return ToolResult::Error(s); }

void AddContentTools(mcp::Catalog& c) {
  c.tools.Add(MakeTool("test_simple_text", "Tests simple text content response", NoArgs(), [](const json&, ToolContext&) {
    return ToolResult::Text("This is a simple text response for testing.");
  }));
  c.tools.Add(MakeTool("test_image_content", "Tests image content response", NoArgs(), [](const json&, ToolContext&) {
    return Blocks({{{"type", "image"}, {"data", kImage}, {"mimeType", "image/png"}}});
  }));
  c.tools.Add(MakeTool("test_audio_content", "Tests audio content response", NoArgs(), [](const json&, ToolContext&) {
    return Blocks({{{"type", "audio"}, {"data", kAudio}, {"mimeType", "audio/wav"}}});
  }));
  c.tools.Add(MakeTool("test_embedded_resource", "Tests embedded resource content response", NoArgs(),
                       [](const json&, ToolContext&) {
                         return Blocks({{{"type", "resource"},
                                         {"resource",
                                          {{"uri", "test://embedded-resource"},
                                           {"mimeType", "text/plain"},
                                           {"text", "This is an embedded resource content."}}}}});
                       }));
  c.tools.Add(MakeTool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
                       NoArgs(), [](const json&, ToolContext&) {
                         return Blocks({{{"type", "text"}, {"text", "Multiple content types test:"}},
                                        {{"type", "image"}, {"data", kImage}, {"mimeType", "image/png"}},
                                        {{"type", "resource"},
                                         {"resource",
                                          {{"uri", "test://mixed-content-resource"},
                                           {"mimeType", "application/json"},
                                           {"text", json{{"test", "data"}, {"value", 123}}.dump()}}}}});
                       }));
  c.tools.Add(MakeTool("test_tool_with_logging", "Tests tool that emits log messages during execution", NoArgs(),
                       [](const json&, ToolContext& ctx) {
                         ctx.Log(mcp::LogLevel::kInfo, "", "Tool execution started");
                         Sleep(50);
                         ctx.Log(mcp::LogLevel::kInfo, "", "Tool processing data");
                         Sleep(50);
                         ctx.Log(mcp::LogLevel::kInfo, "", "Tool execution completed");
                         return ToolResult::Text("Tool with logging executed successfully");
                       }));
  c.tools.Add(MakeTool("test_tool_with_progress", "Tests tool that reports progress notifications", NoArgs(),
                       [](const json&, ToolContext& ctx) {
                         for (int step : {0, 50, 100}) {
                           ctx.Progress(step, 100, "Completed step " + std::to_string(step) + " of 100");
                           if (step < 100) Sleep(50);
                         }
                         return ToolResult::Text("progress reported");
                       }));
  // A tool with the bug #17 describes: a blocking read that ignores cancellation (a FIFO
  // nobody writes blocks forever). The server must still exit when its client leaves.
  c.tools.Add(MakeTool("test_blocking_read", "Reads a file with a plain blocking read, deaf to cancellation",
                       StringArg("path", "The file (a FIFO without a writer blocks)"), [](const json& args, ToolContext&) {
                         int fd = ::open(args.value("path", std::string()).c_str(), O_RDONLY);
                         if (fd < 0) return ToolResult::Error(NotFound("cannot open the file"));
                         char buf[256];
                         ssize_t n = ::read(fd, buf, sizeof buf);
                         ::close(fd);
                         return ToolResult::Text("read " + std::to_string(n) + " bytes");
                       }));
  c.tools.Add(MakeTool("test_error_handling", "Tests error response handling", NoArgs(), [](const json&, ToolContext&) {
    return ToolResult::Error(Internal("This tool intentionally returns an error for testing"));
  }));
  mcp::Tool schema_tool = MakeTool(
      "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
      json::parse(R"json({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                              "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                       "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                       "phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false})json"),
      [](const json& args, ToolContext&) {
        return ToolResult::Text("JSON Schema 2020-12 tool called with: " + args.dump());
      });
  c.tools.Add(std::move(schema_tool));
  c.tools.Add(MakeTool("test_custom_header", "Echoes a parameter mirrored in the Mcp-Param-Region header (SEP-2243)",
                       {{"type", "object"},
                        {"properties", {{"region", {{"type", "string"}, {"x-mcp-header", "Region"}}}}},
                        {"required", {"region"}}},
                       [](const json& args, ToolContext&) {
                         return ToolResult::Text("region: " + args.value("region", std::string()));
                       }));
}

void AddAskingTools(mcp::Catalog& c) {
  c.tools.Add(MakeTool("test_sampling", "Tests server-initiated sampling (LLM completion request)",
                       StringArg("prompt", "The prompt to send to the LLM"), [](const json& args, ToolContext& ctx) {
                         auto r = ctx.Sample("sample", SamplingParams(args.value("prompt", std::string()), 100));
                         if (!r.ok()) return ToolResult::Error(r.status());
                         std::string text = r->contains("content") && (*r)["content"].is_object()
                                                ? (*r)["content"].value("text", "No response")
                                                : "No response";
                         return ToolResult::Text("LLM response: " + text);
                       }));
  c.tools.Add(MakeTool("test_elicitation", "Tests server-initiated elicitation (user input request)",
                       StringArg("message", "The message to show the user"), [](const json& args, ToolContext& ctx) {
                         json schema = {{"type", "object"},
                                        {"properties", {{"response", {{"type", "string"}, {"description", "User's response"}}}}},
                                        {"required", {"response"}}};
                         auto r = ctx.Elicit("response", args.value("message", std::string()), schema);
                         if (!r.ok()) return ToolResult::Error(r.status());
                         return ToolResult::Text("User response: action=" + ActionName(r->action) +
                                                 ", content=" + (r->content.is_null() ? "{}" : r->content.dump()));
                       }));
  c.tools.Add(MakeTool(
      "test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", NoArgs(),
      [](const json&, ToolContext& ctx) {
        json schema = json::parse(R"json({"type": "object", "required": [], "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                       "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}}})json");
        auto r = ctx.Elicit("defaults", "Please review and update the form fields with defaults", schema);
        if (!r.ok()) return ToolResult::Error(r.status());
        return ToolResult::Text("Elicitation completed: action=" + ActionName(r->action) +
                                ", content=" + (r->content.is_null() ? "{}" : r->content.dump()));
      }));
  c.tools.Add(MakeTool(
      "test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", NoArgs(),
      [](const json&, ToolContext& ctx) {
        json schema = json::parse(R"json({"type": "object", "required": [], "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": [{"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1,
                            "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                               {"const": "value2", "title": "Second Choice"},
                                                               {"const": "value3", "title": "Third Choice"}]}}}})json");
        auto r = ctx.Elicit("enums", "Please select options from the enum fields", schema);
        if (!r.ok()) return ToolResult::Error(r.status());
        return ToolResult::Text("Elicitation completed: action=" + ActionName(r->action) +
                                ", content=" + (r->content.is_null() ? "{}" : r->content.dump()));
      }));
}

// 2026-07-28 diagnostics and MRTR fixtures.
void AddModernTools(mcp::Catalog& c, std::weak_ptr<mcp::Catalog> self) {
  c.tools.Add(MakeTool("test_missing_capability", "Test tool requiring sampling", NoArgs(), [](const json&, ToolContext& ctx) {
    auto r = ctx.Sample("sample", SamplingParams("Say hello", 10));
    if (!r.ok()) return ToolResult::Error(r.status());
    return ToolResult::Text("Success");
  }));
  c.tools.Add(MakeTool("test_input_required_result_elicitation", "MRTR: returns InputRequiredResult with elicitation request",
                       NoArgs(), [](const json&, ToolContext& ctx) {
                         auto r = ctx.Elicit("user_name", "What is your name?", ElicitParams("name", "string"));
                         if (!r.ok()) return Waiting(r.status());
                         return ToolResult::Text("Hello, " + Field(*r, "name") + "!");
                       }));
  c.tools.Add(MakeTool("test_input_required_result_sampling", "MRTR: returns InputRequiredResult with sampling request",
                       NoArgs(), [](const json&, ToolContext& ctx) {
                         auto r = ctx.Sample("sample_request", SamplingParams("What is the capital of France?", 100));
                         if (!r.ok()) return Waiting(r.status());
                         const json content = r->value("content", json::object());
                         std::string text = content.is_object() ? content.value("text", "no response") : "no response";
                         return ToolResult::Text("Sampling result: " + text);
                       }));
  c.tools.Add(MakeTool("test_input_required_result_list_roots", "MRTR: returns InputRequiredResult with roots/list request",
                       NoArgs(), [](const json&, ToolContext& ctx) {
                         auto r = ctx.ListRoots("roots_request");
                         if (!r.ok()) return Waiting(r.status());
                         size_t n = r->contains("roots") && (*r)["roots"].is_array() ? (*r)["roots"].size() : 0;
                         return ToolResult::Text("Found " + std::to_string(n) + " root(s)");
                       }));
  auto confirm = [](const char* ok_text) {
    return [ok_text](const json&, ToolContext& ctx) {
      auto r = ctx.Elicit("confirm", "Please confirm", ElicitParams("ok", "boolean"));
      if (!r.ok()) return Waiting(r.status());
      if (r->content.is_object() && r->content.value("ok", false)) return ToolResult::Text(ok_text);
      return ToolResult::Text("not confirmed");
    };
  };
  c.tools.Add(MakeTool("test_input_required_result_request_state", "MRTR: returns InputRequiredResult with requestState",
                       NoArgs(), confirm("state-ok: requestState validated")));
  c.tools.Add(MakeTool("test_input_required_result_tampered_state", "MRTR: HMAC-signed requestState integrity test",
                       NoArgs(), confirm("integrity-ok: state verified")));
  c.tools.Add(MakeTool("test_input_required_result_multiple_inputs",
                       "MRTR: returns InputRequiredResult with multiple input requests", NoArgs(),
                       [](const json&, ToolContext& ctx) {
                         // Ask everything first: one round trip carries all three questions.
                         auto name = ctx.Elicit("user_name", "What is your name?", ElicitParams("name", "string"));
                         auto greeting = ctx.Sample("greeting", SamplingParams("Generate a greeting", 50));
                         auto roots = ctx.ListRoots("client_roots");
                         if (!name.ok()) return Waiting(name.status());
                         if (!greeting.ok()) return Waiting(greeting.status());
                         if (!roots.ok()) return Waiting(roots.status());
                         const json content = greeting->value("content", json::object());
                         std::string text = content.is_object() ? content.value("text", "Hello there!") : "Hello there!";
                         size_t n = roots->contains("roots") && (*roots)["roots"].is_array() ? (*roots)["roots"].size() : 0;
                         return ToolResult::Text("Name: " + Field(*name, "name") + "; Greeting: " + text +
                                                 "; Roots: " + std::to_string(n));
                       }));
  c.tools.Add(MakeTool("test_input_required_result_multi_round", "MRTR: multi-round InputRequiredResult workflow", NoArgs(),
                       [](const json&, ToolContext& ctx) {
                         auto name = ctx.Elicit("step1", "Step 1: What is your name?", ElicitParams("name", "string"));
                         if (!name.ok()) return Waiting(name.status());
                         auto color =
                             ctx.Elicit("step2", "Step 2: What is your favorite color?", ElicitParams("color", "string"));
                         if (!color.ok()) return Waiting(color.status());
                         return ToolResult::Text("Multi-round complete for " + Field(*name, "name") + " who likes " +
                                                 Field(*color, "color"));
                       }));
  c.tools.Add(MakeTool("test_input_required_result_capabilities", "MRTR: respects client capabilities in inputRequests",
                       NoArgs(), [](const json&, ToolContext& ctx) {
                         std::vector<std::string> asked;
                         Status waiting;
                         if (ctx.CanElicit()) {
                           auto r = ctx.Elicit("elicit_input", "Elicitation input", ElicitParams("value", "string"));
                           if (!r.ok()) waiting = r.status();
                           asked.push_back("elicit_input");
                         }
                         if (ctx.CanSample()) {
                           auto r = ctx.Sample("sample_input", SamplingParams("Sample request", 50));
                           if (!r.ok()) waiting = r.status();
                           asked.push_back("sample_input");
                         }
                         if (asked.empty()) return ToolResult::Text("No supported capabilities declared");
                         if (!waiting.ok()) return Waiting(waiting);
                         std::string keys;
                         for (const auto& k : asked) keys += (keys.empty() ? "" : ",") + k;
                         return ToolResult::Text("capabilities-ok: received " + keys);
                       }));
  c.tools.Add(MakeTool("test_streaming_elicitation", "Diagnostic tool validating response progress streams", NoArgs(),
                       [](const json&, ToolContext& ctx) {
                         ctx.Progress(50, 100, "half way");
                         return ToolResult::Text("Streaming complete");
                       }));
  c.tools.Add(MakeTool("test_logging_tool", "Diagnostic logging validator tool", NoArgs(), [](const json&, ToolContext& ctx) {
    ctx.Log(mcp::LogLevel::kInfo, "", "Diagnostic trace logging activated");
    return ToolResult::Text("Logging evaluated");
  }));
  c.tools.Add(MakeTool("test_trigger_tool_change", "Adds or removes a tool (tools/list_changed)", NoArgs(),
                       [self](const json&, ToolContext&) {
                         auto catalog = self.lock();
                         if (!catalog) return ToolResult::Error(Internal("catalog gone"));
                         if (!catalog->tools.Remove("test_dynamic_tool")) {
                           catalog->tools.Add(MakeTool("test_dynamic_tool", "A tool added at run time", NoArgs(),
                                                       [](const json&, ToolContext&) { return ToolResult::Text("dynamic"); }));
                         }
                         return ToolResult::Text("Mutation triggered");
                       }));
  c.tools.Add(MakeTool("test_trigger_prompt_change", "Adds or removes a prompt (prompts/list_changed)", NoArgs(),
                       [self](const json&, ToolContext&) {
                         auto catalog = self.lock();
                         if (!catalog) return ToolResult::Error(Internal("catalog gone"));
                         if (!catalog->prompts.Remove("test_dynamic_prompt")) {
                           mcp::Prompt p;
                           p.spec = {"test_dynamic_prompt", "", "A prompt added at run time", {}};
                           p.handler = [](const json&, ToolContext&) -> Result<json> {
                             return json{{"messages", {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "dynamic"}}}}}}};
                           };
                           catalog->prompts.Add(std::move(p));
                         }
                         return ToolResult::Text("Mutation triggered");
                       }));
}

json UserText(const std::string& text) {
  return {{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}};
}

void AddPrompts(mcp::Catalog& c) {
  mcp::Prompt simple;
  simple.spec = {"test_simple_prompt", "Simple Test Prompt", "A simple prompt without arguments", {}};
  simple.handler = [](const json&, ToolContext&) -> Result<json> {
    return json{{"messages", {UserText("This is a simple prompt for testing.")}}};
  };
  c.prompts.Add(std::move(simple));

  mcp::Prompt with_args;
  with_args.spec = {"test_prompt_with_arguments", "Prompt With Arguments", "A prompt with required arguments",
                    {{"arg1", "First test argument", true,
                      [](std::string_view value, const json&) {
                        std::vector<std::string> out;
                        for (const char* v : {"test", "testValue1", "paris", "park"}) {
                          if (std::string_view(v).substr(0, value.size()) == value) out.push_back(v);
                        }
                        return out;
                      }},
                     {"arg2", "Second test argument", true, {}}}};
  with_args.handler = [](const json& args, ToolContext&) -> Result<json> {
    return json{{"messages", {UserText("Prompt with arguments: arg1='" + args.value("arg1", std::string()) +
                                       "', arg2='" + args.value("arg2", std::string()) + "'")}}};
  };
  c.prompts.Add(std::move(with_args));

  mcp::Prompt embedded;
  embedded.spec = {"test_prompt_with_embedded_resource", "Prompt With Embedded Resource",
                   "A prompt that includes an embedded resource", {{"resourceUri", "URI of the resource to embed", true, {}}}};
  embedded.handler = [](const json& args, ToolContext&) -> Result<json> {
    json resource = {{"uri", args.value("resourceUri", std::string())},
                     {"mimeType", "text/plain"},
                     {"text", "Embedded resource content for testing."}};
    return json{{"messages",
                 {{{"role", "user"}, {"content", {{"type", "resource"}, {"resource", resource}}}},
                  UserText("Please process the embedded resource above.")}}};
  };
  c.prompts.Add(std::move(embedded));

  mcp::Prompt image;
  image.spec = {"test_prompt_with_image", "Prompt With Image", "A prompt that includes image content", {}};
  image.handler = [](const json&, ToolContext&) -> Result<json> {
    return json{{"messages",
                 {{{"role", "user"}, {"content", {{"type", "image"}, {"data", kImage}, {"mimeType", "image/png"}}}},
                  UserText("Please analyze the image above.")}}};
  };
  c.prompts.Add(std::move(image));

  mcp::Prompt mrtr;
  mrtr.spec = {"test_input_required_result_prompt", "", "MRTR: prompt that requires elicitation input", {}};
  mrtr.handler = [](const json&, ToolContext& ctx) -> Result<json> {
    PARITY_ASSIGN_OR_RETURN(auto answer,
                            ctx.Elicit("user_context", "What context should the prompt use?", ElicitParams("context", "string")));
    return json{{"messages", {UserText("Prompt with context: " + Field(answer, "context"))}}};
  };
  c.prompts.Add(std::move(mrtr));
}

mcp::Resource TextResource(std::string uri, std::string name, std::string title, std::string description,
                           std::string mime, json content) {
  mcp::Resource r;
  r.spec = {uri, std::move(name), std::move(title), std::move(description), mime};
  r.read = [uri, mime, content](const std::string&, const std::map<std::string, std::string>&,
                                ToolContext&) -> Result<json> {
    json c = {{"uri", uri}, {"mimeType", mime}};
    for (auto& [k, v] : content.items()) c[k] = v;
    return json::array({c});
  };
  return r;
}

void AddResources(mcp::Catalog& c) {
  c.resources.Add(TextResource("test://static-text", "static-text", "Static Text Resource",
                               "A static text resource for testing", "text/plain",
                               {{"text", "This is the content of the static text resource."}}));
  c.resources.Add(TextResource("test://static-binary", "static-binary", "Static Binary Resource",
                               "A static binary resource (image) for testing", "image/png", {{"blob", kImage}}));
  c.resources.Add(TextResource("test://watched-resource", "watched-resource", "Watched Resource",
                               "A resource clients may subscribe to", "text/plain",
                               {{"text", "Watched resource content"}}));
  mcp::ResourceTemplate t;
  t.uri_template = "test://template/{id}/data";
  t.name = "template";
  t.title = "Resource Template";
  t.description = "A resource template with parameter substitution";
  t.mime_type = "application/json";
  t.read = [](const std::string& uri, const std::map<std::string, std::string>& vars, ToolContext&) -> Result<json> {
    std::string id = vars.count("id") ? vars.at("id") : "";
    json body = {{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
    return json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", body.dump()}}});
  };
  t.complete["id"] = [](std::string_view value, const json&) {
    std::vector<std::string> out;
    for (const char* v : {"123", "456"}) {
      if (std::string_view(v).substr(0, value.size()) == value) out.push_back(v);
    }
    return out;
  };
  c.templates.Add(std::move(t));
}

}  // namespace

std::shared_ptr<mcp::Catalog> MakeFixtureCatalog() {
  auto catalog = std::make_shared<mcp::Catalog>();
  AddContentTools(*catalog);
  AddAskingTools(*catalog);
  AddModernTools(*catalog, catalog);
  AddTaskTools(*catalog);
  AddPrompts(*catalog);
  AddResources(*catalog);
  return catalog;
}

}  // namespace parity::conformance
