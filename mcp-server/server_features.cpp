// tools, prompts, resources and completion: the handlers that serve the Catalog.
#include "mcp-server/invoke.h"
#include "mcp-server/server_internal.h"
#include "mcp-server/task_extension.h"
#include "mcp-server/tasks.h"

namespace parity::mcp {

namespace {

RpcError InvalidParams(std::string message, json data = nullptr) {
  return RpcError{rpc::kInvalidParams, std::move(message), std::move(data)};
}

// One page of a listing; `key` names the array in the result.
template <typename T, typename ToJson>
std::variant<json, RpcError> Page(const std::vector<std::shared_ptr<const T>>& items, const json& params,
                                  size_t page_size, const char* key, ToJson to_json) {
  auto offset = DecodeCursor(params);
  if (!offset.ok()) return RpcErrorFromStatus(offset.status());
  if (*offset > items.size()) return InvalidParams("params.cursor: out of range (the listing changed); list again");
  json list = json::array();
  size_t end = std::min(items.size(), *offset + page_size);
  for (size_t i = *offset; i < end; ++i) list.push_back(to_json(*items[i]));
  json result = {{key, std::move(list)}};
  if (end < items.size()) result["nextCursor"] = EncodeCursor(end);
  return result;
}

std::optional<std::string> StringParam(const json& params, const char* key) {
  if (!params.contains(key) || !params[key].is_string()) return std::nullopt;
  return params[key].get<std::string>();
}

// MRTR inputs of a retry; empty for legacy requests.
Result<InvokeInputs> ReadInputs(const RequestCtx& ctx, const std::string& target, const json& arguments) {
  InvokeInputs in;
  in.binding = {ctx.method, target, arguments};
  if (!ctx.modern) return in;
  if (ctx.params.contains("requestState")) {
    if (!ctx.params["requestState"].is_string()) return InvalidArgument("params.requestState: expected string");
    in.request_state = ctx.params["requestState"];
  }
  if (ctx.params.contains("inputResponses")) {
    if (!ctx.params["inputResponses"].is_object()) return InvalidArgument("params.inputResponses: expected object");
    in.input_responses = ctx.params["inputResponses"];
  }
  return in;
}

std::variant<json, RpcError> FromInvocation(Invocation inv, bool cacheable, const ServerOptions& options,
                                            bool modern) {
  if (inv.error) return *inv.error;
  if (inv.input_required) {
    inv.result["resultType"] = "input_required";
  } else if (cacheable && modern) {
    inv.result["ttlMs"] = 0;  // reads run handlers: never reuse them without asking
    inv.result["cacheScope"] = "private";
  }
  return std::move(inv.result);
}

}  // namespace

Server::Outcome Server::OnToolsList(RequestCtx& ctx) {
  auto page = Page(catalog_->tools.Snapshot(), ctx.params, options_.page_size, "tools",
                   [](const Tool& t) { return ToolToJson(t.spec); });
  if (auto* r = std::get_if<json>(&page); r && ctx.modern) {
    (*r)["ttlMs"] = options_.cache_ttl_ms;
    (*r)["cacheScope"] = "public";
  }
  return page;
}

Server::Outcome Server::OnToolsCall(RequestCtx& ctx) {
  auto name = StringParam(ctx.params, "name");
  if (!name) return InvalidParams("params.name: required string");
  auto tool = catalog_->tools.Find(*name);
  if (!tool) return InvalidParams("Unknown tool: " + *name, {{"name", *name}});
  json arguments = ctx.params.contains("arguments") ? ctx.params["arguments"] : json::object();
  if (arguments.is_null()) arguments = json::object();
  if (!arguments.is_object()) return InvalidParams("params.arguments: expected object");
  bool as_task = !ctx.modern && ctx.params.contains("task");
  if (as_task && tool->spec.task_support == TaskSupport::kForbidden) {
    return RpcError{rpc::kMethodNotFound, "tool " + *name + " does not support task execution", nullptr};
  }
  if (!as_task && !ctx.modern && tool->spec.task_support == TaskSupport::kRequired) {
    return RpcError{rpc::kMethodNotFound, "tool " + *name + " must be called as a task (params.task)", nullptr};
  }
  json confirmations;
  SplitConfirmations(arguments, confirmations);
  auto inputs = ReadInputs(ctx, *name, arguments);
  if (!inputs.ok()) return RpcErrorFromStatus(inputs.status());
  inputs->confirmations = confirmations;
  if (as_task) {
    return tasks_->Start(tool, arguments, *inputs, MakeCallSetup(ctx, nullptr), signer_, ctx.params["task"]);
  }
  RequestChannel channel(ctx, options_.client_request_timeout);
  if (ctx.modern && tool->spec.task_support != TaskSupport::kForbidden) {
    // 2026-07-28: the server decides; a client that declared the extension gets a task
    // once the handler goes background (the legacy `task` param is ignored here).
    if (TaskExtension::Declared(ctx.client_capabilities)) {
      auto outcome = extension_->Call(tool, arguments, std::move(*inputs), MakeCallSetup(ctx, &channel), signer_,
                                      ctx.cancel.token());
      if (auto* created = std::get_if<json>(&outcome)) return std::move(*created);
      return FromInvocation(std::move(std::get<Invocation>(outcome)), false, options_, true);
    }
    if (tool->spec.task_support == TaskSupport::kRequired) return TaskExtension::Missing("tool " + *name);
  }
  return FromInvocation(InvokeTool(*tool, arguments, *inputs, MakeCallSetup(ctx, &channel), signer_), false,
                        options_, ctx.modern);
}

Server::Outcome Server::OnPromptsList(RequestCtx& ctx) {
  auto page = Page(catalog_->prompts.Snapshot(), ctx.params, options_.page_size, "prompts",
                   [](const Prompt& p) { return PromptToJson(p.spec); });
  if (auto* r = std::get_if<json>(&page); r && ctx.modern) {
    (*r)["ttlMs"] = options_.cache_ttl_ms;
    (*r)["cacheScope"] = "public";
  }
  return page;
}

Server::Outcome Server::OnPromptsGet(RequestCtx& ctx) {
  auto name = StringParam(ctx.params, "name");
  if (!name) return InvalidParams("params.name: required string");
  auto prompt = catalog_->prompts.Find(*name);
  if (!prompt) return InvalidParams("Unknown prompt: " + *name, {{"name", *name}});
  json arguments = ctx.params.contains("arguments") ? ctx.params["arguments"] : json::object();
  if (arguments.is_null()) arguments = json::object();
  if (!arguments.is_object()) return InvalidParams("params.arguments: expected object");
  for (auto& [k, v] : arguments.items()) {
    if (!v.is_string()) return InvalidParams("params.arguments." + k + ": expected string");
  }
  for (const auto& a : prompt->spec.arguments) {
    if (a.required && !arguments.contains(a.name)) {
      return InvalidParams("params.arguments." + a.name + ": required argument of prompt " + *name + " is missing");
    }
  }
  auto inputs = ReadInputs(ctx, *name, arguments);
  if (!inputs.ok()) return RpcErrorFromStatus(inputs.status());
  RequestChannel channel(ctx, options_.client_request_timeout);
  auto inv = InvokeHandler(*inputs, MakeCallSetup(ctx, &channel), signer_,
                           [&](CallContext& c) { return prompt->handler(arguments, c); });
  return FromInvocation(std::move(inv), false, options_, ctx.modern);
}

Server::Outcome Server::OnResourcesList(RequestCtx& ctx) {
  auto page = Page(catalog_->resources.Snapshot(), ctx.params, options_.page_size, "resources",
                   [](const Resource& r) { return ResourceToJson(r.spec); });
  if (auto* r = std::get_if<json>(&page); r && ctx.modern) {
    (*r)["ttlMs"] = options_.cache_ttl_ms;
    (*r)["cacheScope"] = "public";
  }
  return page;
}

Server::Outcome Server::OnTemplatesList(RequestCtx& ctx) {
  auto page = Page(catalog_->templates.Snapshot(), ctx.params, options_.page_size, "resourceTemplates",
                   [](const ResourceTemplate& t) { return TemplateToJson(t); });
  if (auto* r = std::get_if<json>(&page); r && ctx.modern) {
    (*r)["ttlMs"] = options_.cache_ttl_ms;
    (*r)["cacheScope"] = "public";
  }
  return page;
}

Server::Outcome Server::OnResourcesRead(RequestCtx& ctx) {
  auto uri = StringParam(ctx.params, "uri");
  if (!uri) return InvalidParams("params.uri: required string");
  ResourceReader reader;
  std::map<std::string, std::string> variables;
  if (auto r = catalog_->resources.Find(*uri)) {
    reader = r->read;
  } else {
    for (const auto& t : catalog_->templates.Snapshot()) {
      if (auto vars = MatchUriTemplate(t->uri_template, *uri)) {
        reader = t->read;
        variables = std::move(*vars);
        break;
      }
    }
  }
  if (!reader) {
    // 2026-07-28 folds resource-not-found into -32602; 2025-11-25 has its own code.
    return RpcError{ctx.modern ? rpc::kInvalidParams : rpc::kResourceNotFound, "Resource not found: " + *uri,
                    {{"uri", *uri}}};
  }
  auto inputs = ReadInputs(ctx, *uri, json::object());
  if (!inputs.ok()) return RpcErrorFromStatus(inputs.status());
  RequestChannel channel(ctx, options_.client_request_timeout);
  auto inv = InvokeHandler(*inputs, MakeCallSetup(ctx, &channel), signer_, [&](CallContext& c) -> Result<json> {
    PARITY_ASSIGN_OR_RETURN(json contents, reader(*uri, variables, c));
    return json{{"contents", std::move(contents)}};
  });
  return FromInvocation(std::move(inv), true, options_, ctx.modern);
}

Server::Outcome Server::OnSubscribe(RequestCtx& ctx, bool subscribe) {
  auto uri = StringParam(ctx.params, "uri");
  if (!uri) return InvalidParams("params.uri: required string");
  if (subscribe) ctx.env.connection->Subscribe(*uri);
  else ctx.env.connection->Unsubscribe(*uri);
  return json::object();
}

Server::Outcome Server::OnComplete(RequestCtx& ctx) {
  const json& p = ctx.params;
  if (!p.contains("ref") || !p["ref"].is_object()) return InvalidParams("params.ref: required object");
  if (!p.contains("argument") || !p["argument"].is_object()) return InvalidParams("params.argument: required object");
  auto arg_name = StringParam(p["argument"], "name");
  auto value = StringParam(p["argument"], "value");
  if (!arg_name) return InvalidParams("params.argument.name: required string");
  if (!value) return InvalidParams("params.argument.value: required string");
  json context = p.contains("context") && p["context"].is_object() ? p["context"].value("arguments", json::object())
                                                                   : json::object();
  std::string type = p["ref"].value("type", "");
  Completer completer;
  if (type == "ref/prompt") {
    auto name = StringParam(p["ref"], "name");
    if (!name) return InvalidParams("params.ref.name: required string");
    auto prompt = catalog_->prompts.Find(*name);
    if (!prompt) return InvalidParams("Unknown prompt: " + *name);
    for (const auto& a : prompt->spec.arguments) {
      if (a.name == *arg_name) completer = a.complete;
    }
  } else if (type == "ref/resource") {
    auto uri = StringParam(p["ref"], "uri");
    if (!uri) return InvalidParams("params.ref.uri: required string");
    for (const auto& t : catalog_->templates.Snapshot()) {
      if (t->uri_template != *uri) continue;
      auto it = t->complete.find(*arg_name);
      if (it != t->complete.end()) completer = it->second;
    }
  } else {
    return InvalidParams("params.ref.type: expected \"ref/prompt\" or \"ref/resource\"");
  }
  std::vector<std::string> values = completer ? completer(*value, context) : std::vector<std::string>{};
  size_t total = values.size();
  if (values.size() > 100) values.resize(100);
  return json{{"completion", {{"values", values}, {"total", total}, {"hasMore", total > values.size()}}}};
}

}  // namespace parity::mcp
