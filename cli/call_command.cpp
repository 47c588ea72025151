// parity call TOOL 'JSON': one tool in-process. Progress and log messages go to stderr;
// questions are answered from --answers FILE.json, or the call ends with the confirmation
// the tool needs (printed on stdout, exit 1) so a script can answer it and call again.
#include <cstdio>
#include <mutex>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/user_policy.h"
#include "support/json_document.h"
#include "mcp-server/invoke.h"
#include "mcp-server/registry.h"
#include "tools/all_tools.h"

namespace parity::cli {

namespace {

using mcp::json;

class StderrChannel : public mcp::ClientChannel {
 public:
  void Notify(const std::string& method, json params) override {
    std::string line;
    if (method == "notifications/progress") {
      line = "[progress] " + params["progress"].dump();
      if (params.contains("total")) line += "/" + params["total"].dump();
      if (params.contains("message")) line += " " + params["message"].get<std::string>();
    } else {
      line = "[" + params.value("level", "log") + "] ";
      if (params.contains("logger")) line += params["logger"].get<std::string>() + ": ";
      line += params["data"].is_string() ? params["data"].get<std::string>() : params["data"].dump();
    }
    std::lock_guard lock(mutex_);
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  Result<json> Request(const std::string& method, json, const CancellationToken&) override {
    return Unavailable("the command line cannot send " + method);
  }

 private:
  std::mutex mutex_;
};

Result<json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (buf.str().size() > (16u << 20)) return InvalidArgument(path + ": larger than 16 MiB");
  PARITY_ASSIGN_OR_RETURN(json value, ParseJsonDocument(buf.str(), path));
  if (!value.is_object()) return InvalidArgument(path + ": expected a JSON object {key: answer}");
  return value;
}

int Usage(const std::string& why) {
  std::fprintf(stderr, "parity call: %s\nusage: parity call TOOL 'JSON' [--answers FILE.json] [--report-dir DIR] [--policy FILE] "
               "[--allow-folder DIR]...\n",
               why.c_str());
  return kExitUsage;
}

}  // namespace

int CallCommand(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  std::string answers_path, report_dir = "numerical_report";
  PolicyFlags policy_flags;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag_error;
    if (TakePolicyFlag(args, i, policy_flags, flag_error)) {
      if (!flag_error.empty()) return Usage(flag_error);
    } else if (args[i] == "--answers" || args[i] == "--report-dir") {
      if (i + 1 >= args.size()) return Usage(args[i] + " needs a value");
      (args[i] == "--answers" ? answers_path : report_dir) = args[++i];
    } else if (args[i].rfind("--", 0) == 0) {
      return Usage("unknown option " + args[i]);
    } else {
      positional.push_back(args[i]);
    }
  }
  if (positional.empty() || positional.size() > 2) return Usage("expected TOOL and optionally 'JSON'");
  mcp::ToolRegistry registry;
  for (auto& tool : tools::AllTools()) registry.Add(std::move(tool));
  auto tool = registry.Find(positional[0]);
  if (!tool) {
    std::string names;
    for (const auto& t : registry.Snapshot()) names += (names.empty() ? "" : ", ") + t->spec.name;
    return Usage("unknown tool \"" + positional[0] + "\" (tools: " + (names.empty() ? "none" : names) + ")");
  }
  json arguments = json::object();
  if (positional.size() == 2) {
    arguments = json::parse(positional[1], nullptr, false);
    if (arguments.is_discarded()) return Usage("arguments are not valid JSON: " + positional[1]);
    if (!arguments.is_object()) return Usage("arguments must be a JSON object");
  }
  auto user_policy = LoadUserPolicy(policy_flags, {std::filesystem::absolute(report_dir)}, "report directory");
  if (!user_policy.ok()) {
    std::fprintf(stderr, "parity call: %s\n", user_policy.status().ToString().c_str());
    return kExitFailure;
  }
  StderrChannel channel;
  mcp::CallSetup setup;
  setup.policy = *user_policy;
  setup.caller_is_user = true;          // the user typed these arguments
  setup.user_prompt = TerminalPrompt(/*yes=*/false);
  setup.channel = &channel;
  setup.progress_token = "cli";
  setup.log_level = mcp::LogLevel::kDebug;
  setup.report_dir = report_dir;
  if (!answers_path.empty()) {
    auto answers = ReadJsonFile(answers_path);
    if (!answers.ok()) return Usage("--answers: " + answers.status().message());
    setup.answers = *answers;
  }
  mcp::InvokeInputs inputs;
  mcp::SplitConfirmations(arguments, inputs.confirmations);
  inputs.binding = {"tools/call", tool->spec.name, arguments};
  mcp::StateSigner signer;  // a token from this process is only good in this process
  mcp::Invocation inv = mcp::InvokeTool(*tool, arguments, inputs, setup, signer);
  if (inv.error) {
    std::fprintf(stderr, "parity call: %s\n", inv.error->ToJson().dump().c_str());
    return kExitFailure;
  }
  if (!inv.confirmation.is_null()) {
    std::printf("%s\n", inv.confirmation.dump(2).c_str());
    std::fprintf(stderr, "parity call: the tool needs answers; put them in a JSON file {key: {\"action\": \"accept\", "
                         "\"content\": {...}}} and pass --answers FILE\n");
    return kExitFailure;
  }
  const json& r = inv.result;
  if (r.contains("structuredContent")) {
    std::printf("%s\n", r["structuredContent"].dump(2).c_str());
  } else {
    for (const auto& block : r["content"]) {
      if (block.value("type", "") == "text") std::printf("%s\n", block.value("text", "").c_str());
      else std::printf("%s\n", block.dump().c_str());
    }
  }
  return r.value("isError", false) ? kExitFailure : kExitOk;
}

}  // namespace parity::cli
