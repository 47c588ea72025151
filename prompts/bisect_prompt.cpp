// prompts/get bisect: the first commit that changed the numbers, driven by the assistant
// with parity's tools. The history good..bad (first parent) is read here and listed with
// the first probe; good, bad, case and steps left open are asked in one elicitation form,
// or listed as pending confirmations when the client cannot elicit. The file classes and
// environment anomalies are confirmed in the steps, as in the premerge.
#include <charconv>

#include "domain/workflow/bisect_git.h"
#include "domain/workflow/bisect_search.h"
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

struct Choices {
  std::string good, bad, case_name, steps;
};

Status Ask(Choices& c, mcp::ToolContext& ctx) {
  json props = json::object(), required = json::array();
  auto ask = [&](const char* key, json schema) {
    props[key] = std::move(schema);
    required.push_back(key);
  };
  if (c.good.empty()) ask("good", {{"type", "string"}, {"title", "Good commit"}, {"description", "Its numbers are the reference, e.g. main"}});
  if (c.bad.empty()) ask("bad", {{"type", "string"}, {"title", "Bad commit"}, {"description", "The branch or commit whose numbers differ"}});
  if (c.case_name.empty()) ask("case", {{"type", "string"}, {"title", "Config (case)"}, {"description", "The registered config to train"}});
  if (c.steps.empty()) ask("steps", {{"type", "integer"}, {"title", "Steps per training"}, {"minimum", 1}, {"default", 100}});
  if (required.empty()) return Status::Ok();
  json schema = {{"type", "object"}, {"properties", props}, {"required", required}};
  PARITY_ASSIGN_OR_RETURN(auto answer, ctx.Elicit("bisect.checklist", "parity bisect: confirm the range and the training", schema));
  if (answer.action != mcp::ElicitAnswer::Action::kAccept) return Cancelled("the bisect was not confirmed; nothing was started");
  const json& a = answer.content;
  auto take = [&](const char* key, std::string& into) {
    if (into.empty() && a.is_object() && a.contains(key)) into = a[key].is_string() ? a[key].get<std::string>() : a[key].dump();
  };
  take("good", c.good);
  take("bad", c.bad);
  take("case", c.case_name);
  take("steps", c.steps);
  return Status::Ok();
}

Result<std::string> History(const fs::path& repo, const std::string& good, const std::string& bad, std::string& first) {
  workflow::BisectGit git(repo);
  PARITY_ASSIGN_OR_RETURN(std::string g, git.Resolve(good));
  PARITY_ASSIGN_OR_RETURN(std::string b, git.Resolve(bad));
  PARITY_ASSIGN_OR_RETURN(bool ancestor, git.IsAncestor(g, b));
  if (!ancestor) return FailedPrecondition("arguments.good: " + good + " is not an ancestor of " + bad);
  PARITY_ASSIGN_OR_RETURN(auto commits, git.FirstParentRange(g, b));
  if (commits.empty()) return FailedPrecondition("arguments.bad: no commit between " + good + " and " + bad);
  workflow::BisectSearch search(commits.size());
  size_t next = search.Next(1).front();
  first = std::to_string(next) + " (" + commits[next - 1].commit.substr(0, 12) + ")";
  std::string text = "### First-parent history (" + std::to_string(commits.size()) + " commits, about " +
                     std::to_string(search.ProbesLeftEstimate()) + " trainings besides the good side's)\n\n" +
                     "0. `" + g.substr(0, 12) + "` the good commit\n";
  for (size_t i = 0; i < commits.size(); ++i) {
    text += std::to_string(i + 1) + ". `" + commits[i].commit.substr(0, 12) + "` " + commits[i].subject +
            (commits[i].merge() ? " (merge)" : "") + (i + 1 == commits.size() ? " — the bad commit" : "") + "\n";
  }
  return text;
}

Result<json> Render(const json& args, mcp::ToolContext& ctx, const fs::path& default_repo) {
  fs::path repo = RepoFrom(args, default_repo);
  Choices c{Arg(args, "good"), Arg(args, "bad"), Arg(args, "case"), Arg(args, "steps")};
  if (!c.steps.empty()) {
    int v = 0;
    auto [end, ec] = std::from_chars(c.steps.data(), c.steps.data() + c.steps.size(), v);
    if (ec != std::errc() || end != c.steps.data() + c.steps.size() || v < 1) {
      return InvalidArgument("arguments.steps: expected an integer >= 1, got \"" + c.steps + "\"");
    }
  }
  std::string pending;
  if (ctx.CanElicit()) {
    PARITY_RETURN_IF_ERROR(Ask(c, ctx));
  } else {
    for (const auto& [value, item] : {std::pair{c.good, "the good commit"}, std::pair{c.bad, "the bad commit"},
                                      std::pair{c.case_name, "the config (case) to train"},
                                      std::pair{c.steps, "the steps per training"}}) {
      if (value.empty()) pending += std::string("- [ ] ") + item + "\n";
    }
    if (!pending.empty()) pending = "### Pending confirmations — settle each with the user first\n\n" + pending;
  }
  std::string history = "(the history is listed once the good and bad commits are known)", first = "the middle one";
  if (!c.good.empty() && !c.bad.empty()) {
    PARITY_ASSIGN_OR_RETURN(history, History(repo, c.good, c.bad, first));
  }
  std::string report_dir = ctx.report_dir().empty() ? (repo / "numerical_report").string() : ctx.report_dir().string();
  PARITY_ASSIGN_OR_RETURN(std::string text,
                          RenderTemplate("bisect.md", {{"good", c.good.empty() ? "<good>" : c.good},
                                                       {"bad", c.bad.empty() ? "<bad>" : c.bad},
                                                       {"repo", repo.string()},
                                                       {"case", c.case_name.empty() ? "<case>" : c.case_name},
                                                       {"steps", c.steps.empty() ? "100" : c.steps},
                                                       {"report_dir", report_dir},
                                                       {"history", history},
                                                       {"first_probe", first},
                                                       {"rule", "`preset: premerge` unless the user chose another preset, `bitwise` or a `tolerance`"},
                                                       {"pending", pending}}));
  return UserTextPromptResult("bisect: " + (c.good.empty() ? "?" : c.good) + ".." + (c.bad.empty() ? "?" : c.bad), text);
}

}  // namespace

mcp::Prompt MakeBisectPrompt(const fs::path& default_repo) {
  mcp::PromptSpec spec;
  spec.name = "bisect";
  spec.title = "Bisect the numerics / 定位改变数值的提交";
  spec.description =
      "Binary search over the first-parent history for the first commit whose training numbers differ from a good "
      "commit's (commits that do not run are skipped), then the root-cause hunt on it: operator, line, hunk.";
  spec.arguments = {
      {"good", "The good commit (its numbers are the reference)", false, CompleteBranches(default_repo)},
      {"bad", "The bad commit or branch", false, CompleteBranches(default_repo)},
      {"case", "The registered config to train", false, CompleteConfigs(default_repo)},
      {"steps", "Training steps per probe (default 100)", false, CompleteFixed({"100", "20", "10"})},
      {"repo", "The repository (default: the server's working directory)", false, nullptr},
  };
  return {spec, [default_repo](const json& args, mcp::ToolContext& ctx) { return Render(args, ctx, default_repo); }};
}

}  // namespace parity::prompts
