#include "tools/audit_workspace/audit_workspace.h"

#include <cstdio>
#include <filesystem>

#include "domain/git/audit.h"
#include "domain/git/classify.h"
#include "domain/git/git_handle.h"
#include "domain/git/prepare.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/audit_workspace/audit_workspace_json.h"
#include "tools/audit_workspace/audit_workspace_schema.h"

namespace parity::tools {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// At most this many fields in one confirmation form; beyond it committed class-A files are
// summarised in the message instead of listed one by one.
constexpr size_t kMaxFormFields = 100;

struct Params {
  std::string action = "audit";
  std::string repo = ".";
  std::optional<std::string> baseline;
  std::string candidate = "HEAD";
  std::optional<std::string> baseline_path, candidate_path, report_dir;
  std::map<std::string, std::string> classes;
  std::vector<std::string> paths;
  bool force = false;
  std::optional<bool> remove_stale;
  int64_t max_files = 5000;
};

Result<Params> Decode(const json& arguments) {
  Params p;
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  JsonReader r(arguments, "arguments");
  r.Optional("action", p.action).OneOf("action", p.action, {"audit", "diff", "prepare", "cleanup"});
  r.Optional("repo", p.repo).Optional("baseline", p.baseline).Optional("candidate", p.candidate);
  r.Optional("baseline_path", p.baseline_path).Optional("candidate_path", p.candidate_path);
  r.Optional("report_dir", p.report_dir).Optional("classes", p.classes).Optional("paths", p.paths);
  r.Optional("force", p.force).Optional("remove_stale", p.remove_stale).Optional("max_files", p.max_files);
  for (const auto& [path, cls] : p.classes) {
    if (cls != "A" && cls != "B" && cls != "C" && cls != "ignore") {
      r.Fail(r.Child("classes") + "[\"" + path + "\"]", "expected one of A, B, C, ignore, got \"" + cls + "\"");
    }
  }
  if (r.ok() && (p.max_files < 1 || p.max_files > 100000)) r.Fail(r.Child("max_files"), "must be between 1 and 100000");
  if (r.ok() && (p.action == "diff" || p.action == "prepare") && !p.baseline) {
    r.Fail(r.Child("baseline"), "required for action=" + p.action + " (the baseline revision, e.g. cann/master)");
  }
  PARITY_RETURN_IF_ERROR(r.Finish());
  return p;
}

// FNV-1a: a stable key for the same question across MRTR retries and processes.
std::string StableHash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

fs::path ReportDir(const Params& p, const mcp::ToolContext& ctx, const fs::path& repo_root) {
  if (p.report_dir) return fs::absolute(*p.report_dir);
  if (!ctx.report_dir().empty()) return fs::absolute(ctx.report_dir());
  return repo_root / "numerical_report";
}

std::optional<std::string> InsideRepo(const fs::path& dir, const fs::path& repo_root) {
  auto rel = fs::weakly_canonical(dir).lexically_relative(fs::weakly_canonical(repo_root));
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

Result<git::Classification> Classify(git_repository* repo, const Params& p, const fs::path& report_dir, json& warnings) {
  PARITY_ASSIGN_OR_RETURN(auto baseline, git::ResolveBaseline(repo, *p.baseline));
  PARITY_ASSIGN_OR_RETURN(auto candidate, git::ResolveCommit(repo, p.candidate));
  git::ClassifyOptions options;
  options.max_files = static_cast<size_t>(p.max_files);
  options.own_output_dir = InsideRepo(report_dir, git::WorkdirOf(repo));
  PARITY_ASSIGN_OR_RETURN(auto cl, git::ProposeClassification(repo, baseline, candidate, options));
  if (baseline.commit == candidate.commit) {
    warnings.push_back("baseline and candidate are the same commit " + baseline.commit.substr(0, 12) +
                       ": only uncommitted changes differ");
  }
  if (!cl.uncommitted.files.empty() && git_repository_head_unborn(repo) != 1) {
    auto head = git::ResolveCommit(repo, "HEAD");
    if (head.ok() && head->commit != candidate.commit) {
      warnings.push_back("uncommitted changes are relative to HEAD " + head->commit.substr(0, 12) + ", not to the candidate " +
                         candidate.ref + "; class B/C copies take the whole working-tree file");
    }
  }
  if (cl.committed.truncated || cl.uncommitted.truncated) {
    warnings.push_back("more than max_files=" + std::to_string(p.max_files) + " changed files; the list is cut");
  }
  return cl;
}

// The classes the user confirmed: from `classes` when it covers every file, otherwise
// asked through elicitation with the proposal as each default.
Result<std::map<std::string, std::string>> ConfirmClasses(const git::Classification& cl, const Params& p,
                                                          mcp::ToolContext& ctx) {
  std::map<std::string, std::string> chosen;
  bool all_given = true;
  for (const auto& f : cl.files) {
    auto it = p.classes.find(f.path);
    chosen[f.path] = it != p.classes.end() ? it->second : f.proposed;
    all_given = all_given && it != p.classes.end();
  }
  // Classes written by the user on parity's command line stand; from an MCP caller they
  // are only the defaults of the form the user confirms (the caller cannot confirm).
  if (cl.files.empty() || (all_given && ctx.caller_is_user())) return chosen;

  json properties = json::object();
  json required = json::array();
  std::string identity = cl.baseline.commit + ".." + cl.candidate.commit;
  size_t summarised = 0;
  bool big = cl.files.size() > kMaxFormFields;
  for (const auto& f : cl.files) {
    identity += "\n" + f.path + "=" + f.proposed;
    if (big && f.origin == git::ChangeOrigin::kCommitted && chosen[f.path] == "A") {
      ++summarised;
      continue;
    }
    std::string stat = f.binary ? "binary" : "+" + std::to_string(f.additions) + " -" + std::to_string(f.deletions);
    properties[f.path] = {{"type", "string"}, {"title", f.path}, {"enum", f.allowed}, {"default", chosen[f.path]},
                          {"description", std::string(git::OriginName(f.origin)) + ", " + f.change + " (" + stat + "): " + f.reason}};
    required.push_back(f.path);
  }
  std::string message = "Confirm the class of each changed file between " + cl.baseline.ref + " (" +
                        cl.baseline.commit.substr(0, 12) + ") and " + cl.candidate.ref + " (" +
                        cl.candidate.commit.substr(0, 12) + "): A = committed change under test, B = infra copied "
                        "into both worktrees, C = copied into the candidate only, ignore = left out.";
  if (summarised) message += " " + std::to_string(summarised) + " more committed files are class A.";
  json schema = {{"type", "object"}, {"properties", properties}, {"required", required}};
  const std::string key = "audit_workspace.classes." + StableHash(identity);
  if (!ctx.caller_is_user() && !ctx.CanAskUser()) {
    return policy::Refused("audit_workspace prepare: the class of each changed file must be confirmed by the user, "
                            "and this client cannot ask the user (no elicitation); no worktree was created")
        .WithEvidence("question", message)
        .WithHint("use a client with elicitation, or run `parity premerge --config premerge.json` at a terminal "
                  "(its confirm.classes is the user's own answer)");
  }
  PARITY_ASSIGN_OR_RETURN(auto answer, ctx.caller_is_user() ? ctx.Elicit(key, message, schema)
                                                            : ctx.AskUser(key, message, schema));
  if (answer.action != mcp::ElicitAnswer::Action::kAccept) {
    return Cancelled("the file classification was not confirmed; no worktree was created")
        .WithHint("call prepare again, or pass the classes you want in `classes`");
  }
  if (!answer.content.is_object()) return InvalidArgument("elicitation answer: expected an object of classes");
  for (const auto& [path, value] : answer.content.items()) {
    if (!properties.contains(path)) return InvalidArgument("elicitation answer: unknown file \"" + path + "\"");
    if (!value.is_string()) return InvalidArgument("elicitation answer[\"" + path + "\"]: expected string");
    chosen[path] = value.get<std::string>();
  }
  return chosen;
}

// Whether parity's worktrees of an earlier run that stand in the way may go: the
// `remove_stale` argument when given, otherwise the user's answer (elicitation).
Result<bool> ConfirmStaleRemoval(git_repository* repo, const git::PrepareRequest& req, const Params& p,
                                 mcp::ToolContext& ctx) {
  auto [base, cand] = git::WorktreePaths(repo, req);
  PARITY_ASSIGN_OR_RETURN(auto stale, git::FindStaleWorktrees(repo, {base, cand}));
  if (stale.empty()) return false;
  // Removing is the user's to confirm: remove_stale=true stands when the user wrote it (parity's
  // command line, a pipeline's config); from an MCP caller it is not an answer. false stands.
  if (p.remove_stale && (!*p.remove_stale || ctx.caller_is_user())) return *p.remove_stale;
  Status listed = git::StaleWorktreesInTheWay(repo, stale, req.report_dir);
  if (!ctx.caller_is_user() && !ctx.CanAskUser()) {
    return policy::Refused("audit_workspace prepare: removing parity's worktrees of an earlier run must be confirmed "
                           "by the user, and this client cannot ask the user (no elicitation); nothing was removed or "
                           "created")
        .WithHint(listed.hint())
        .WithEvidence("stale_worktrees", git::StaleJson(stale).dump(2));
  }
  json schema = {{"type", "object"},
                 {"properties", {{"remove", {{"type", "boolean"}, {"title", "Remove them and go on"}, {"default", true},
                                             {"description", "they are parity's (marked when it made them)"}}}}},
                 {"required", {"remove"}}};
  std::string message = listed.message() + ". Remove them (their uncommitted changes listed are discarded) and create "
                        "the new worktrees?";
  const std::string key = "audit_workspace.stale." + StableHash(git::StaleJson(stale).dump());
  PARITY_ASSIGN_OR_RETURN(auto answer, ctx.caller_is_user() ? ctx.Elicit(key, message, schema)
                                                            : ctx.AskUser(key, message, schema));
  if (answer.action != mcp::ElicitAnswer::Action::kAccept) {
    return Cancelled("the removal of parity's earlier worktrees was not confirmed; nothing was removed or created")
        .WithHint(listed.hint());
  }
  return answer.content.is_object() && answer.content.value("remove", false);
}

Result<json> Run(const Params& p, mcp::ToolContext& ctx) {
  PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, p.repo, policy::Access::kRead, "arguments.repo").status());
  PARITY_ASSIGN_OR_RETURN(auto repo, git::OpenRepository(p.repo));
  fs::path root = git::WorkdirOf(repo.get());
  fs::path report_dir = ReportDir(p, ctx, root);
  json out = {{"action", p.action}, {"repo", root.string()}};
  // audit and diff only read the repository; prepare and cleanup write beside it (parity's
  // worktrees) and into the report directory.
  const bool writes = p.action == "prepare" || p.action == "cleanup";
  PARITY_RETURN_IF_ERROR(
      AuthorizePath(ctx, root, writes ? policy::Access::kWrite : policy::Access::kRead, "arguments.repo").status());
  if (p.action != "audit") {
    PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, report_dir, policy::Access::kWrite, "arguments.report_dir").status());
  }
  for (const auto* given : {&p.baseline_path, &p.candidate_path}) {
    // Beside the repository and named after it (<repo>-baseline, <repo>-hunt-test): where
    // parity's own worktrees go, as the defaults do; anywhere else must be the user's folder.
    if (!*given) continue;  // the default place, beside the repository
    fs::path wanted = fs::absolute(**given).lexically_normal();
    fs::path top = root.lexically_normal();
    if (top.filename().empty()) top = top.parent_path();  // a workdir ends with '/'
    if (wanted.parent_path() == top.parent_path() &&
        wanted.filename().string().rfind(top.filename().string() + "-", 0) == 0) {
      continue;
    }
    if (p.action == "prepare") {
      PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, **given, policy::Access::kWrite,
                                           given == &p.baseline_path ? "arguments.baseline_path"
                                                                     : "arguments.candidate_path").status());
    }
  }

  if (p.action == "audit") {
    git::AuditOptions options;
    options.max_listed_files = static_cast<size_t>(p.max_files);
    if (p.baseline) {
      std::string name = *p.baseline;
      PARITY_ASSIGN_OR_RETURN(auto remotes, git::RemoteNames(repo.get()));
      for (const auto& r : remotes) {
        if (name.rfind(r + "/", 0) == 0) name = name.substr(r.size() + 1);
      }
      options.baseline_branches.insert(options.baseline_branches.begin(), name);
    }
    PARITY_ASSIGN_OR_RETURN(auto audit, git::AuditWorkspace(repo.get(), options));
    out["audit"] = ToJson(audit);
    if (p.baseline) {
      auto resolved = git::ResolveBaseline(repo.get(), *p.baseline);
      out["audit"]["baseline"] = resolved.ok()
          ? json{{"ok", true}, {"commit", ToJson(*resolved)}}
          : json{{"ok", false}, {"error", resolved.status().message()}, {"hint", resolved.status().hint()}};
    }
    return out;
  }

  if (p.action == "cleanup") {
    git::CleanupRequest req;
    for (const auto& path : p.paths) req.paths.emplace_back(path);
    req.force = p.force;
    req.report_dir = report_dir;
    PARITY_ASSIGN_OR_RETURN(auto done, git::CleanupWorktrees(repo.get(), req));
    out["cleanup"] = ToJson(done);
    out["cleanup"]["report_dir"] = report_dir.string();
    return out;
  }

  json warnings = json::array();
  PARITY_ASSIGN_OR_RETURN(auto cl, Classify(repo.get(), p, report_dir, warnings));
  out["diff"] = ToJson(cl);
  out["diff"]["warnings"] = warnings;
  if (p.action == "diff") return out;

  if (cl.committed.truncated || cl.uncommitted.truncated) {
    return FailedPrecondition("more than max_files=" + std::to_string(p.max_files) + " changed files; cannot classify them all")
        .WithHint("raise max_files");
  }
  PARITY_ASSIGN_OR_RETURN(auto classes, ConfirmClasses(cl, p, ctx));
  git::PrepareRequest req;
  req.classification = std::move(cl);
  req.classes = classes;
  if (p.baseline_path) req.baseline_path = *p.baseline_path;
  if (p.candidate_path) req.candidate_path = *p.candidate_path;
  req.report_dir = report_dir;
  req.cancel = ctx.cancellation();
  PARITY_ASSIGN_OR_RETURN(req.remove_stale, ConfirmStaleRemoval(repo.get(), req, p, ctx));
  ctx.Progress(1, 3, "creating worktrees and copying infra files");
  PARITY_ASSIGN_OR_RETURN(auto done, git::PrepareWorktrees(repo.get(), req));
  ctx.Progress(3, 3, "worktrees ready");
  out["prepare"] = ToJson(done);
  out["prepare"]["classes"] = classes;
  out["prepare"]["report_dir"] = report_dir.string();
  return out;
}

std::string Summary(const json& out) {
  const std::string& action = out["action"].get_ref<const std::string&>();
  if (action == "audit") {
    const json& a = out["audit"];
    std::string s = "workspace " + out["repo"].get<std::string>() + ": " + std::to_string(a["remotes"].size()) +
                    " remote(s), " + std::to_string(a["staged"].size()) + " staged, " +
                    std::to_string(a["unstaged"].size()) + " unstaged, " + std::to_string(a["untracked"].size()) +
                    " untracked, " + std::to_string(a["stash"].size()) + " stash entr(ies)";
    for (const auto& f : a["stale_fork"]) {
      if (f["diverged"].get<bool>()) {
        s += "; STALE FORK CHECK: '" + f["branch"].get<std::string>() + "' differs across " +
             std::to_string(f["refs"].size()) + " refs, choose the baseline explicitly";
      }
    }
    return s;
  }
  if (action == "cleanup") return "removed " + std::to_string(out["cleanup"]["removed"].size()) + " parity worktree(s)";
  std::string s = std::to_string(out["diff"]["files"].size()) + " changed file(s) between " +
                  out["diff"]["baseline"]["ref"].get<std::string>() + " and " +
                  out["diff"]["candidate"]["ref"].get<std::string>();
  if (action == "prepare") {
    s += "; worktrees " + out["prepare"]["baseline_worktree"]["path"].get<std::string>() + " and " +
         out["prepare"]["candidate_worktree"]["path"].get<std::string>() + " ready, " +
         std::to_string(out["prepare"]["copied"].size()) + " file(s) copied";
  }
  return s;
}

}  // namespace

mcp::Tool MakeAuditWorkspaceTool() {
  mcp::ToolSpec spec;
  spec.name = "audit_workspace";
  spec.title = "Audit the git workspace and prepare isolated worktrees";
  spec.description =
      "Step 0 of a pre-merge numerics check, without touching the user's working tree, index, HEAD, branches or "
      "stash. action=audit (default, read-only): remotes, HEAD and upstream ahead/behind, staged/unstaged/untracked "
      "files, stash, worktrees, and the stale-fork check (a branch such as master carried by several remotes at "
      "different commits must be chosen explicitly, e.g. cann/master). action=diff: `git diff baseline..candidate "
      "--stat` per file plus uncommitted files, each with a proposed class A (committed, under test), B (infra both "
      "sides need), C (candidate only) or ignore, and the reason. action=prepare: the user confirms the classes, "
      "then <repo>-baseline and <repo>-candidate worktrees (detached HEAD, visible to `git worktree list`) are "
      "created beside the repo, class-B files copied into both and class-C files into the candidate, and "
      "infra_files.tar.gz written to the report directory; parity's own worktrees of an earlier run standing where "
      "the new ones go are removed first only when the user confirms (remove_stale, else asked). action=cleanup: "
      "removes parity's worktrees only. "
      "Every action is recorded in the report directory's manifest.json.";
  spec.input_schema = AuditWorkspaceInputSchema();
  spec.output_schema = AuditWorkspaceOutputSchema();
  spec.annotations.read_only = false;
  spec.annotations.destructive = true;  // cleanup deletes parity's worktrees (never the user's files)
  spec.annotations.idempotent = false;
  spec.annotations.open_world = false;
  auto handler = [](const json& arguments, mcp::ToolContext& ctx) -> mcp::ToolResult {
    auto params = Decode(arguments);
    if (!params.ok()) return mcp::ToolResult::Error(params.status());
    auto out = Run(*params, ctx);
    if (!out.ok()) return mcp::ToolResult::Error(out.status());
    return mcp::ToolResult::Structured(*out, Summary(*out));
  };
  return {std::move(spec), std::move(handler)};
}

}  // namespace parity::tools
