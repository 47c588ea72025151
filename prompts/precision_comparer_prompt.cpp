// prompts/get precision-comparer: reads the PrecisionComparer config.json named by `config`
// (errors name its JSON path), takes tolerance / max_iterations from the arguments or the
// config's debug section, and asks the user's consent to inject prints (in a parity
// worktree copy) through elicitation, or lists it as a pending confirmation.
#include <charconv>

#include "domain/workflow/comparer_config.h"
#include "prompts/completion.h"
#include "prompts/prompts.h"
#include "prompts/template.h"

namespace parity::prompts {

namespace {

using mcp::json;
namespace fs = std::filesystem;

std::string Arg(const json& args, const char* name) {
  return args.contains(name) && args[name].is_string() ? args[name].get<std::string>() : std::string();
}

Result<json> Render(const json& args, mcp::ToolContext& ctx, const fs::path& default_repo) {
  fs::path repo = RepoFrom(args, default_repo);
  std::string config_arg = Arg(args, "config");
  fs::path config_path = config_arg.empty() ? fs::path("config.json") : fs::path(config_arg);
  if (config_path.is_relative()) config_path = repo / config_path;
  PARITY_ASSIGN_OR_RETURN(auto config, workflow::ReadComparerConfig(config_path));

  std::string tolerance = Arg(args, "tolerance"), iterations = Arg(args, "max_iterations");
  if (!tolerance.empty()) {
    double v = 0;
    auto [end, ec] = std::from_chars(tolerance.data(), tolerance.data() + tolerance.size(), v);
    if (ec != std::errc() || end != tolerance.data() + tolerance.size() || v < 0) {
      return InvalidArgument("arguments.tolerance: expected a number >= 0, got \"" + tolerance + "\"");
    }
  } else {
    tolerance = json(config.tolerance).dump();
  }
  if (!iterations.empty()) {
    int v = 0;
    auto [end, ec] = std::from_chars(iterations.data(), iterations.data() + iterations.size(), v);
    if (ec != std::errc() || end != iterations.data() + iterations.size() || v < 1) {
      return InvalidArgument("arguments.max_iterations: expected an integer >= 1, got \"" + iterations + "\"");
    }
  } else {
    iterations = std::to_string(config.max_iterations);
  }

  std::string pending, consent = Arg(args, "inject_prints");
  if (!consent.empty() && consent != "yes" && consent != "no") {
    return InvalidArgument("arguments.inject_prints: expected \"yes\" or \"no\", got \"" + consent + "\"");
  }
  if (!consent.empty()) {
    pending = consent == "yes" ? "The user allowed injected prints (in a parity worktree copy only)."
                               : "The user did NOT allow injected prints: stop after msprobe_first_diff and report.";
  } else if (ctx.CanElicit()) {
    json schema = {{"type", "object"},
                   {"properties",
                    {{"inject_prints",
                      {{"type", "boolean"}, {"title", "Allow injected prints"}, {"default", true},
                       {"description", "parity may add probe prints to a worktree copy of the test code (" +
                                           config.test.code_path + "), re-run the trainings, and revert byte-identically"}}}}},
                   {"required", {"inject_prints"}}};
    PARITY_ASSIGN_OR_RETURN(auto answer, ctx.Elicit("precision-comparer.consent." + config_path.string(),
                                                    "precision-comparer: confirm the config " + config_path.string() +
                                                        " (tolerance " + tolerance + ", at most " + iterations +
                                                        " iterations) and whether prints may be injected.",
                                                    schema));
    if (answer.action != mcp::ElicitAnswer::Action::kAccept) {
      return Cancelled("the precision-comparer run was not confirmed; nothing was started");
    }
    bool inject = answer.content.is_object() && answer.content.value("inject_prints", false);
    pending = inject ? "The user allowed injected prints (in a parity worktree copy only)."
                     : "The user did NOT allow injected prints: stop after msprobe_first_diff and report.";
  } else {
    pending = "### Pending confirmations — settle each with the user first\n\n"
              "- [ ] the config's paths, modes and SSH hosts (the password is never shown)\n"
              "- [ ] tolerance " + tolerance + " and max_iterations " + iterations + "\n"
              "- [ ] consent to inject prints into a parity worktree copy of the test code\n";
  }
  std::string summary = "```json\n" + workflow::Redacted(config).dump(2) + "\n```";
  PARITY_ASSIGN_OR_RETURN(std::string text,
                          RenderTemplate("precision-comparer.md", {{"config", config_path.string()},
                                                                   {"tolerance", tolerance},
                                                                   {"max_iterations", iterations},
                                                                   {"config_summary", summary},
                                                                   {"pending", pending}}));
  return UserTextPromptResult("precision-comparer: " + config_path.string(), text);
}

}  // namespace

mcp::Prompt MakePrecisionComparerPrompt(const fs::path& default_repo) {
  mcp::PromptSpec spec;
  spec.name = "precision-comparer";
  spec.title = "Precision comparer / 精度对比与根因定位";
  spec.description =
      "Run baseline and test trainings from a PrecisionComparer config.json, compare loss and grad norm, and when "
      "they differ find the first divergent operator and its source line (msprobe data, injected prints).";
  spec.arguments = {
      {"config", "Path of the PrecisionComparer config.json (default config.json)", false, CompleteJsonFiles(default_repo)},
      {"tolerance", "Tolerance for loss / grad norm (default: the config's debug.tolerance, else 0.001)", false,
       CompleteFixed({"0.001", "0.0005", "0.0001", "1e-05"})},
      {"max_iterations", "Most inject-and-rerun rounds (default: the config's, else 10)", false,
       CompleteFixed({"10", "20", "5"})},
      {"inject_prints", "Consent to inject probe prints into a worktree copy: yes or no (asked when absent)", false,
       CompleteFixed({"yes", "no"})},
      {"repo", "Folder relative paths are read from (default: the server's working directory)", false, nullptr},
  };
  return {spec, [default_repo](const json& args, mcp::ToolContext& ctx) { return Render(args, ctx, default_repo); }};
}

}  // namespace parity::prompts
