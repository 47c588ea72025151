#include "mcp-server/errors.h"

namespace parity::mcp {

json RpcError::ToJson() const {
  json j = {{"code", code}, {"message", message}};
  if (!data.is_null()) j["data"] = data;
  return j;
}

RpcError RpcErrorFromStatus(const Status& status) {
  RpcError e;
  switch (status.kind()) {
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kNotFound: e.code = rpc::kInvalidParams; break;
    default: e.code = rpc::kInternalError; break;
  }
  e.message = status.message();
  json data = json::object();
  data["kind"] = ErrorKindName(status.kind());
  if (!status.hint().empty()) data["hint"] = status.hint();
  for (const auto& ev : status.evidence()) data["evidence"][ev.name] = ev.value;
  e.data = std::move(data);
  return e;
}

int HttpStatusFor(const RpcError& error, bool modern) {
  if (error.code == rpc::kServerBusy) return 503;
  if (!modern) return error.code == rpc::kParseError || error.code == rpc::kInvalidRequest ? 400 : 200;
  switch (error.code) {
    case rpc::kMethodNotFound: return 404;
    case rpc::kParseError:
    case rpc::kInvalidRequest:
    case rpc::kInvalidParams:
    case rpc::kHeaderMismatch:
    case rpc::kMissingCapability:
    case rpc::kUnsupportedVersion: return 400;
    default: return 200;
  }
}

json ErrorResponse(const json& id, const RpcError& error) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", error.ToJson()}};
}

json ResultResponse(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

}  // namespace parity::mcp
