#include "tools/authorize.h"

#include "mcp-server/signed_state.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Merges the policy.json fragments of several decisions into one.
void MergeLine(json& into, const json& fragment) {
  if (!fragment.is_object()) return;
  for (const auto& [key, value] : fragment.items()) {
    if (value.is_array()) {
      if (!into.contains(key)) into[key] = json::array();
      for (const auto& v : value) into[key].push_back(v);
    } else if (value.is_object()) {
      MergeLine(into[key], value);
    } else {
      into[key] = value;
    }
  }
}

std::string PolicyFileName(const policy::Policy& policy) {
  json sources = policy.ToJson()["sources"];
  for (const auto& s : sources) {
    std::string text = s.get<std::string>();
    if (text.rfind("no policy file at ", 0) == 0) return text.substr(18, text.find(" (") - 18);
    return text;
  }
  return policy::DefaultPolicyFile().string();
}

// file:///a/b -> /a/b; anything else (other schemes, percent-escapes we do not decode) is
// not a folder of this machine.
std::optional<fs::path> RootPath(const json& root) {
  if (!root.is_object() || !root.contains("uri") || !root["uri"].is_string()) return std::nullopt;
  std::string uri = root["uri"];
  if (uri.rfind("file://", 0) != 0) return std::nullopt;
  std::string path = uri.substr(7);
  if (path.empty() || path[0] != '/' || path.find('%') != std::string::npos) return std::nullopt;
  return fs::path(path);
}

}  // namespace

Judged Judge(const policy::Policy& policy, const policy::RunAction& action) {
  return {policy.CheckRun(action), policy::Describe(action)};
}
Judged Judge(const policy::Policy& policy, const policy::ConnectAction& action) {
  return {policy.CheckConnect(action), policy::Describe(action)};
}
Judged Judge(const policy::Policy& policy, const policy::SendAction& action) {
  return {policy.CheckSend(action), policy::Describe(action)};
}

Status Authorize(mcp::ToolContext& ctx, std::string_view tool, const std::vector<Judged>& actions) {
  std::string shown, reasons;
  json line = json::object();
  for (const auto& a : actions) {
    if (a.decision.allowed()) continue;
    if (a.decision.verdict == policy::Decision::Verdict::kRefused) {
      Status s = policy::Refused(std::string(tool) + ": " + a.decision.reason);
      s.WithEvidence("action", a.description);
      if (!a.decision.allow_with.is_null()) {
        s.WithEvidence("policy_line", a.decision.allow_with.dump());
        s.WithHint("only the user can allow this, in " + PolicyFileName(ctx.policy()) + " (or with --allow-folder "
                   "for a folder); nothing was run, written or sent");
      } else {
        s.WithHint("nothing was run, written or sent");
      }
      return s;
    }
    shown += (shown.empty() ? "" : "\n") + a.description;
    reasons += "\n- " + a.decision.reason;
    MergeLine(line, a.decision.allow_with);
  }
  if (shown.empty()) return Status::Ok();
  const std::string file = PolicyFileName(ctx.policy());
  std::string message = "parity (" + std::string(tool) + ") asks for your confirmation of an action your policy " +
                        "does not allow:\n" + shown + "\nWhy it is asked:" + reasons +
                        "\nAccept runs exactly this, once. To allow it for good, add to " + file + ": " + line.dump();
  auto refusal = [&](std::string why) {
    return policy::Refused(std::string(tool) + ": " + why)
        .WithEvidence("action", shown)
        .WithEvidence("policy_line", line.dump())
        .WithHint("nothing was run or sent; to allow it, the user adds the policy line to " + file +
                  " (an assistant cannot confirm it)");
  };
  if (!ctx.CanAskUser()) {
    return refusal("outside the user's policy, and this client cannot ask the user (no elicitation):" + reasons);
  }
  std::string key = "policy." + mcp::Sha256Hex(std::string(tool) + "\n" + shown);
  json schema = {{"type", "object"}, {"properties", json::object()}};
  auto answer = ctx.AskUser(key, message, schema);
  if (!answer.ok()) {
    if (answer.status().kind() == ErrorKind::kInputRequired) return answer.status();
    return refusal("outside the user's policy, and asking the user failed: " + answer.status().message());
  }
  if (answer->action != mcp::ElicitAnswer::Action::kAccept) {
    return Cancelled(std::string(tool) + ": the user declined; nothing was run or sent")
        .WithEvidence("action", shown);
  }
  return Status::Ok();
}

Result<fs::path> AuthorizePath(mcp::ToolContext& ctx, const fs::path& path, policy::Access access,
                               std::string_view what) {
  policy::Decision d = ctx.policy().CheckPath(path, access);
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) resolved = fs::absolute(path).lexically_normal();
  if (d.allowed()) return resolved;
  if (ctx.CanListRoots()) {
    PARITY_ASSIGN_OR_RETURN(json roots, ctx.ListRoots("parity.policy.roots"));
    policy::Policy widened = ctx.policy();
    bool any = false;
    if (roots.contains("roots") && roots["roots"].is_array()) {
      for (const auto& r : roots["roots"]) {
        if (auto p = RootPath(r)) {
          widened.AddFolder(*p, true, "MCP root");
          any = true;
        }
      }
    }
    if (any && widened.CheckPath(path, access).allowed()) return resolved;
  }
  return policy::Refused(std::string(what) + ": " + d.reason)
      .WithEvidence("path", path.string())
      .WithEvidence("policy_line", d.allow_with.dump())
      .WithHint("only the user can widen the folders: " + PolicyFileName(ctx.policy()) +
                ", `--allow-folder DIR` of parity serve, or the client's roots");
}

}  // namespace parity::tools
