// JSON-RPC errors and the one place a Status becomes one. Protocol faults are JSON-RPC
// errors; a tool's own failure is an isError result (see ToolResult::Error), never this.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::mcp {

using json = nlohmann::json;

namespace rpc {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerBusy = -32000;             // retryable: the worker pool is full
inline constexpr int kResourceNotFound = -32002;       // 2025-11-25 only
inline constexpr int kHeaderMismatch = -32020;         // 2026-07-28
inline constexpr int kMissingCapability = -32021;      // 2026-07-28
inline constexpr int kUnsupportedVersion = -32022;     // 2026-07-28
}  // namespace rpc

struct RpcError {
  int code = rpc::kInternalError;
  std::string message;
  json data;  // null when none

  json ToJson() const;
};

// The mapping: invalid argument / not found -> -32602 (the message names the JSON path),
// cancelled / deadline / unavailable / precondition / internal -> -32603, with the hint and
// evidence in `data`.
RpcError RpcErrorFromStatus(const Status& status);

// HTTP status for an error answered as a plain JSON response. The 2026-07-28 transport
// maps codes to statuses (404 unknown method, 400 invalid); the legacy one answers 200.
int HttpStatusFor(const RpcError& error, bool modern);

// {"jsonrpc":"2.0","id":id,"error":{...}}; id null when it could not be read.
json ErrorResponse(const json& id, const RpcError& error);
json ResultResponse(const json& id, json result);

}  // namespace parity::mcp
