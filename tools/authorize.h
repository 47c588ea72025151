// The gate every tool passes before it runs, connects, sends or touches a path the user's
// policy governs (support/policy.h). A tool first judges each action of the call, then
// calls Authorize once with all of them, before anything happens:
//  - all allowed by the policy: ok;
//  - one refused (a path outside the folders, a secret bound to another destination):
//    policy::Refused naming the action and the policy line;
//  - otherwise the user is asked once, through ToolContext::AskUser, with the exact argv,
//    working folder, environment, host and destination, and the policy lines that would
//    allow them for good: accept -> ok; decline or cancel -> kCancelled ("declined");
//    a client that cannot ask -> policy::Refused with the same text (never a token the
//    caller could answer itself); an MRTR round pending -> kInputRequired.
// Paths are refused or allowed, never asked: AuthorizePath resolves them (symlinks too),
// also accepting the client's MCP roots when the client declares them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mcp-server/tool.h"
#include "support/policy.h"

namespace parity::tools {

struct Judged {
  policy::Decision decision;
  std::string description;  // what the user is shown (policy::Describe)
};

Judged Judge(const policy::Policy& policy, const policy::RunAction& action);
Judged Judge(const policy::Policy& policy, const policy::ConnectAction& action);
Judged Judge(const policy::Policy& policy, const policy::SendAction& action);

// One confirmation for all the actions of a call that the policy does not allow.
Status Authorize(mcp::ToolContext& ctx, std::string_view tool, const std::vector<Judged>& actions);

// `path` resolved (absolute, symlinks of its existing prefix followed), or
// policy::Refused when it lies outside the policy's folders and the client's roots.
// `what` names the argument in the refusal ("arguments.paths[0]").
Result<std::filesystem::path> AuthorizePath(mcp::ToolContext& ctx, const std::filesystem::path& path,
                                            policy::Access access, std::string_view what);

}  // namespace parity::tools
