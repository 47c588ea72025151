// prompts/get premerge-accuracy-check: the skill's checklist (确认清单) and the config-matrix
// choice. Items the arguments leave open are asked in one elicitation form, then the matrix
// (proposed from the diff) in a second; a client that cannot elicit gets them listed as
// pending confirmations in the prompt, so the assistant settles them with the user first.
#include <algorithm>

#include "domain/workflow/matrix.h"
#include "domain/workflow/repo_catalog.h"
#include "prompts/completion.h"
#include "prompts/prompts.h"
#include "prompts/template.h"

namespace parity::prompts {

namespace {

using mcp::json;
namespace fs = std::filesystem;

constexpr size_t kMaxEnum = 100;  // larger choice lists are asked as free text

std::string Arg(const json& args, const char* name) {
  return args.contains(name) && args[name].is_string() ? args[name].get<std::string>() : std::string();
}

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string Shown(const std::string& v, const char* when_empty) { return v.empty() ? when_empty : "`" + v + "`"; }

json ChoiceSchema(const std::string& title, const std::vector<std::string>& choices, const std::string& def) {
  json s = {{"type", "string"}, {"title", title}};
  if (!choices.empty() && choices.size() <= kMaxEnum) s["enum"] = choices;
  if (!def.empty()) s["default"] = def;
  return s;
}

struct Checklist {
  std::string baseline, candidate, models, steps, configs, tokenizer, dataset, email;
};

// One form with every checklist item the arguments did not settle.
Status AskChecklist(Checklist& c, const std::vector<std::string>& branches, const std::vector<std::string>& models,
                    mcp::ToolContext& ctx) {
  json props = json::object();
  json required = json::array();
  if (c.baseline.empty()) {
    props["baseline"] = ChoiceSchema("分支 A (baseline)", branches, "");
    props["baseline"]["description"] = "Baseline branch or commit, e.g. cann/master or origin/master";
    required.push_back("baseline");
  }
  if (c.candidate.empty()) {
    props["candidate"] = ChoiceSchema("分支 B (candidate)", branches, "");
    props["candidate"]["description"] = "The branch or commit to verify";
    required.push_back("candidate");
  }
  if (c.models.empty()) {
    json items = {{"type", "string"}};
    if (!models.empty()) items["enum"] = models;
    props["models"] = {{"type", "array"}, {"title", "模型 (models)"}, {"items", items}, {"minItems", 1}};
    if (!models.empty()) props["models"]["default"] = models;
    required.push_back("models");
  }
  if (c.steps.empty()) {
    props["steps"] = {{"type", "integer"}, {"title", "训练步数 (steps)"}, {"minimum", 1}, {"default", 100},
                      {"description", "At least 100 for a merge decision"}};
    required.push_back("steps");
  }
  if (c.dataset.empty()) {
    props["dataset"] = {{"type", "string"}, {"title", "Dataset path"}, {"description", "--training.dataset_path; empty: the config's"}};
  }
  if (c.tokenizer.empty()) {
    props["tokenizer"] = {{"type", "string"}, {"title", "Tokenizer path"}, {"description", "Empty when the model needs none"}};
  }
  if (c.email.empty()) {
    props["email"] = {{"type", "string"}, {"title", "报告接收邮箱 (email)"}, {"format", "email"},
                      {"description", "Empty: keep the report local, send nothing"}};
  }
  if (required.empty()) return Status::Ok();  // only optional items left: the defaults stand
  PARITY_ASSIGN_OR_RETURN(
      auto answer,
      ctx.Elicit("premerge.checklist",
                 "premerge-accuracy-check 确认清单: confirm the baseline, the candidate, the models and the steps "
                 "(deterministic options --debug.seed=42 --debug.deterministic are always on).",
                 {{"type", "object"}, {"properties", props}, {"required", required}}));
  if (answer.action != mcp::ElicitAnswer::Action::kAccept) {
    return Cancelled("the premerge checklist (确认清单) was not confirmed; nothing was started")
        .WithHint("run the prompt again and confirm the checklist, or pass the items as arguments");
  }
  const json& a = answer.content;
  auto take = [&](const char* key, std::string& into) {
    if (!a.is_object() || !a.contains(key)) return;
    const json& v = a[key];
    if (v.is_string()) into = v.get<std::string>();
    else if (v.is_number_integer()) into = std::to_string(v.get<int64_t>());
    else if (v.is_array()) {
      std::vector<std::string> items;
      for (const auto& i : v) if (i.is_string()) items.push_back(i.get<std::string>());
      into = Join(items, ",");
    }
  };
  take("baseline", c.baseline);
  take("candidate", c.candidate);
  take("models", c.models);
  take("steps", c.steps);
  take("dataset", c.dataset);
  take("tokenizer", c.tokenizer);
  take("email", c.email);
  return Status::Ok();
}

Status AskMatrix(Checklist& c, const workflow::MatrixProposal& proposal, const std::vector<std::string>& configs,
                 mcp::ToolContext& ctx) {
  std::string message = "Config 矩阵确认 (Step 2): proposed from the diff " + c.baseline + ".." + c.candidate + ": " +
                        (proposal.configs.empty() ? std::string("none") : Join(proposal.configs)) + ".";
  for (const auto& a : proposal.axes) {
    if (a.touched) message += " " + a.title + " touched by " + Join(a.files) + ".";
  }
  for (const auto& n : proposal.notes) message += " " + n + ".";
  message += " Every config change needs your consent.";
  json props = {{"configs", {{"type", "array"}, {"title", "Configs"}, {"items", {{"type", "string"}, {"enum", configs}}},
                             {"minItems", 1}, {"default", proposal.configs}}}};
  PARITY_ASSIGN_OR_RETURN(auto answer, ctx.Elicit("premerge.matrix." + c.baseline + ".." + c.candidate, message,
                                                  {{"type", "object"}, {"properties", props}, {"required", {"configs"}}}));
  if (answer.action != mcp::ElicitAnswer::Action::kAccept) {
    return Cancelled("the config matrix was not confirmed; nothing was started")
        .WithHint("run the prompt again, or pass `configs`");
  }
  std::vector<std::string> chosen;
  if (answer.content.is_object() && answer.content.contains("configs") && answer.content["configs"].is_array()) {
    for (const auto& i : answer.content["configs"]) {
      if (i.is_string()) chosen.push_back(i.get<std::string>());
    }
  }
  if (chosen.empty()) return InvalidArgument("elicitation answer.configs: expected a non-empty list of config names");
  c.configs = Join(chosen, ",");
  return Status::Ok();
}

std::string MatrixText(const workflow::MatrixProposal& p) {
  std::string text;
  for (const auto& a : p.axes) {
    text += "- " + a.title + ": " + (a.touched ? "touched by " + Join(a.files) + " → " + a.suggestion : "not touched") + "\n";
  }
  text += "- proposal: " + (p.configs.empty() ? std::string("(none)") : Join(p.configs)) + "\n";
  for (const auto& n : p.notes) text += "- note: " + n + "\n";
  return text;
}

Result<json> Render(const json& args, mcp::ToolContext& ctx, const fs::path& default_repo) {
  fs::path repo = RepoFrom(args, default_repo);
  Checklist c{Arg(args, "baseline"), Arg(args, "candidate"), Arg(args, "models"), Arg(args, "steps"),
              Arg(args, "configs"),  Arg(args, "tokenizer"), Arg(args, "dataset"), Arg(args, "email")};
  std::vector<std::string> problems;  // reported in the prompt, never hidden
  auto branches = workflow::ListBranches(repo);
  if (!branches.ok()) problems.push_back("cannot list the branches of " + repo.string() + ": " + branches.status().ToString());
  auto catalog = workflow::ReadModelCatalog(repo);
  if (!catalog.ok()) problems.push_back("cannot read the models of " + repo.string() + ": " + catalog.status().ToString());
  std::vector<std::string> models;
  if (catalog.ok()) {
    for (const auto& [m, cfgs] : catalog->configs) models.push_back(m);
    if (models.empty()) problems.push_back("no config_registry.py with models found under " + repo.string());
  }
  if (!c.steps.empty() && c.steps.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("arguments.steps: expected a positive integer, got \"" + c.steps + "\"");
  }

  if (ctx.CanElicit()) PARITY_RETURN_IF_ERROR(AskChecklist(c, branches.ok() ? *branches : std::vector<std::string>{}, models, ctx));

  std::vector<std::string> chosen_models = workflow::SplitList(c.models);
  if (std::find(chosen_models.begin(), chosen_models.end(), "all") != chosen_models.end()) chosen_models = models;
  std::vector<std::string> configs = catalog.ok() ? workflow::ConfigsOf(*catalog, chosen_models) : std::vector<std::string>{};
  workflow::MatrixProposal proposal;
  std::string matrix = "(needs the baseline and the candidate)";
  if (!c.baseline.empty() && !c.candidate.empty()) {
    auto files = workflow::ChangedFiles(repo, c.baseline, c.candidate);
    if (files.ok()) {
      proposal = workflow::ProposeMatrix(*files, configs);
      matrix = MatrixText(proposal);
      if (c.configs.empty() && ctx.CanElicit() && !configs.empty()) PARITY_RETURN_IF_ERROR(AskMatrix(c, proposal, configs, ctx));
    } else {
      problems.push_back(files.status().ToString());
    }
  }

  std::vector<std::string> pending;
  if (c.baseline.empty()) pending.push_back("分支 A (baseline): not given — ask; check stale forks (origin/master vs cann/master)");
  if (c.candidate.empty()) pending.push_back("分支 B (candidate): not given — ask");
  if (c.models.empty()) pending.push_back("模型列表: all or a subset of: " + (models.empty() ? std::string("(none found)") : Join(models)));
  if (c.steps.empty()) pending.push_back("训练步数: default 100 (at least 100) — confirm");
  if (c.configs.empty()) pending.push_back("Config 矩阵: confirm axis by axis; proposal: " +
                                           (proposal.configs.empty() ? std::string("(none yet)") : Join(proposal.configs)));
  if (c.tokenizer.empty()) pending.push_back("Tokenizer 路径: ask whether the model needs one");
  if (c.email.empty()) pending.push_back("报告接收邮箱: none given — the report stays local unless the user names one");
  pending.push_back("训练日志已存在？: if the user already has both logs, skip Steps 0-4");
  pending.push_back("File classes A/B/C (Step 0) and every config change (Step 2): confirm file by file / change by change");
  std::string pending_text = "### Pending confirmations — settle each with the user before Step 0\n\n";
  for (const auto& p : pending) pending_text += "- [ ] " + p + "\n";
  if (!problems.empty()) {
    pending_text += "\n### Problems found while preparing this prompt (report them to the user)\n\n";
    for (const auto& p : problems) pending_text += "- " + p + "\n";
  }

  PARITY_ASSIGN_OR_RETURN(
      std::string text,
      RenderTemplate("premerge-accuracy-check.md",
                     {{"repo", repo.string()},
                      {"baseline", Shown(c.baseline, "(to confirm)")},
                      {"candidate", Shown(c.candidate, "(to confirm)")},
                      {"models", Shown(c.models, "(to confirm)")},
                      {"configs", Shown(c.configs, "(to confirm in Step 2)")},
                      {"steps", Shown(c.steps, "100 (default, to confirm)")},
                      {"tokenizer", Shown(c.tokenizer, "(none given)")},
                      {"dataset", Shown(c.dataset, "(the config's)")},
                      {"email", Shown(c.email, "(none: report kept local)")},
                      {"pending", pending_text},
                      {"matrix", matrix}}));
  return UserTextPromptResult("premerge-accuracy-check: " + (c.baseline.empty() ? "?" : c.baseline) + " vs " +
                                  (c.candidate.empty() ? "?" : c.candidate),
                              text);
}

}  // namespace

mcp::Prompt MakePremergePrompt(const fs::path& default_repo) {
  mcp::PromptSpec spec;
  spec.name = "premerge-accuracy-check";
  spec.title = "Pre-merge accuracy check / 合入前精度验证";
  spec.description =
      "Prove that a change keeps training numerics identical (loss and grad_norm bitwise or within 1e-5) between a "
      "baseline and a candidate branch, and produce the HTML/PDF report. 数值精度对比 / 精度验证 / numerical stability report.";
  spec.arguments = {
      {"baseline", "分支 A: baseline branch or commit (e.g. cann/master)", false, CompleteBranches(default_repo)},
      {"candidate", "分支 B: the branch or commit to verify", false, CompleteBranches(default_repo)},
      {"models", "Models, comma-separated, or all", false, CompleteModels(default_repo)},
      {"steps", "Training steps (default 100)", false, CompleteFixed({"100", "200", "500"})},
      {"configs", "Registered config names, comma-separated (the matrix)", false, CompleteConfigs(default_repo)},
      {"tokenizer", "Tokenizer path", false, nullptr},
      {"dataset", "Dataset path (--training.dataset_path)", false, nullptr},
      {"email", "Send the report to this address (optional)", false, nullptr},
      {"repo", "Repository path (default: the server's working directory)", false, nullptr},
  };
  return {spec, [default_repo](const json& args, mcp::ToolContext& ctx) { return Render(args, ctx, default_repo); }};
}

std::vector<mcp::Prompt> AllPrompts(const fs::path& default_repo) {
  return {MakePremergePrompt(default_repo), MakePrecisionComparerPrompt(default_repo), MakeBisectPrompt(default_repo)};
}

}  // namespace parity::prompts
