// JSON-RPC 2.0 framing: one raw message (a stdio line, an HTTP body) into a classified
// message, with size and shape checks. Parsing never throws; a bad message becomes the
// RpcError to answer (id null when the id could not be read).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "mcp-server/errors.h"

namespace parity::mcp {

struct Request {
  json id;  // string or integer
  std::string method;
  json params;  // object or null
};
struct Notification {
  std::string method;
  json params;
};
struct Response {  // a client's answer to a server->client request
  json id;
  json result;  // null when error
  json error;   // null when result
};

using Message = std::variant<Request, Notification, Response>;

// The outcome for one element: a message, or the error to answer with `id`.
struct ParsedError {
  json id;
  RpcError error;
};
using ParsedMessage = std::variant<Message, ParsedError>;

struct ParsedBody {
  bool batch = false;  // the body was a JSON array
  std::vector<ParsedMessage> messages;
};

inline constexpr size_t kDefaultMaxMessageBytes = 4u << 20;
// Deeper nesting is refused before parsing (-32700): the value would be destroyed and
// serialised recursively. Tool schemas and arguments stay far below it.
inline constexpr size_t kMaxNestingDepth = 128;

// Parses raw bytes. A body over `max_bytes`, nesting deeper than kMaxNestingDepth or
// invalid JSON (-32700, id null), an empty batch, or a non-object (-32600) comes back as
// one ParsedError.
ParsedBody ParseBody(std::string_view raw, size_t max_bytes = kDefaultMaxMessageBytes);

// Classifies one decoded JSON value.
ParsedMessage ClassifyMessage(const json& value);

// A stable map key for an id (strings and integers are distinct ids).
std::string IdKey(const json& id);

// JSON text safe for one line: invalid UTF-8 is replaced instead of throwing.
std::string DumpLine(const json& message);

}  // namespace parity::mcp
