// audit_workspace through the protocol layer's own invocation path (InvokeTool), so the
// elicitation round trip is the real one: the 2026-07-28 MRTR form (input_required, then a
// retry with requestState + inputResponses) and the confirmation_required fallback's first leg.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mcp-server/invoke.h"
#include "tests/common/fake_tool_context.h"
#include "tests/git/git_fixture.h"
#include "tools/audit_workspace/audit_workspace.h"

namespace parity::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using git::testing::DemoRepos;
using git::testing::TempDir;

class AuditWorkspaceToolTest : public ::testing::Test {
 protected:
  void SetUp() override { repos_ = git::testing::MakeDemoRepos(tmp_.path()); }

  // A legacy-era call from a client without elicitation (the confirmation fallback);
  // as_user: from parity's own command line (`parity call`, a pipeline).
  mcp::Invocation Call(json arguments, json confirmations = nullptr, bool as_user = false) {
    mcp::InvokeInputs in;
    in.binding = {"tools/call", "audit_workspace", arguments};
    in.confirmations = std::move(confirmations);
    mcp::CallSetup setup;
    setup.report_dir = tmp_.path() / "report";
    setup.policy = policy_;
    setup.caller_is_user = as_user;
    return mcp::InvokeTool(tool_, arguments, in, setup, signer_);
  }
  mcp::Invocation CallAsUser(json arguments) { return Call(std::move(arguments), nullptr, true); }
  // A 2026-07-28 call from a client that declared elicitation; a retry carries the answers.
  mcp::Invocation CallModern(json arguments, std::string request_state = "", json input_responses = nullptr) {
    mcp::InvokeInputs in;
    in.binding = {"tools/call", "audit_workspace", arguments};
    in.request_state = std::move(request_state);
    in.input_responses = std::move(input_responses);
    mcp::CallSetup setup;
    setup.modern = true;
    setup.client_capabilities = {{"elicitation", json::object()}};
    setup.report_dir = tmp_.path() / "report";
    setup.policy = policy_;
    return mcp::InvokeTool(tool_, arguments, in, setup, signer_);
  }
  json Structured(const mcp::Invocation& inv) {
    EXPECT_FALSE(inv.error);
    EXPECT_FALSE(inv.result.value("isError", false)) << inv.result.dump(2);
    return inv.result.value("structuredContent", json());
  }
  std::string ErrorText(const mcp::Invocation& inv) {
    EXPECT_TRUE(inv.result.value("isError", false)) << inv.result.dump(2);
    return inv.result["content"][0]["text"].get<std::string>();
  }

  TempDir tmp_;
  DemoRepos repos_;
  mcp::Tool tool_ = MakeAuditWorkspaceTool();
  mcp::StateSigner signer_{"test-key"};
  std::shared_ptr<const policy::Policy> policy_ =
      std::make_shared<policy::Policy>(parity::testing::TestUserPolicy(tmp_.path() / "report"));
};

TEST_F(AuditWorkspaceToolTest, SpecDeclaresSchemasAndAnnotations) {
  EXPECT_EQ(tool_.spec.name, "audit_workspace");
  EXPECT_FALSE(tool_.spec.description.empty());
  EXPECT_EQ(tool_.spec.input_schema["type"], "object");
  EXPECT_EQ(tool_.spec.input_schema["properties"]["action"]["enum"].size(), 4u);
  EXPECT_EQ(tool_.spec.output_schema["required"], json({"action", "repo"}));
  EXPECT_EQ(tool_.spec.annotations.read_only, false);
}

TEST_F(AuditWorkspaceToolTest, AuditReportsTheStaleForkAndTheAmbiguousBaseline) {
  json out = Structured(Call({{"repo", repos_.work.string()}, {"baseline", "master"}}));
  EXPECT_EQ(out["action"], "audit");
  EXPECT_EQ(out["repo"], repos_.work.string());
  const json& a = out["audit"];
  EXPECT_EQ(a["head"]["branch"], "feature");
  EXPECT_EQ(a["head"]["upstream"], "origin/master");
  EXPECT_EQ(a["remotes"].size(), 2u);
  EXPECT_EQ(a["stash"][0]["ref"], "stash@{0}");
  ASSERT_EQ(a["stale_fork"].size(), 1u);
  EXPECT_EQ(a["stale_fork"][0]["branch"], "master");
  EXPECT_EQ(a["stale_fork"][0]["choice_required"], true);
  EXPECT_EQ(a["baseline"]["ok"], false);
  EXPECT_THAT(a["baseline"]["error"].get<std::string>(), HasSubstr("cann/master"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "report"));  // read-only: nothing written
}

TEST_F(AuditWorkspaceToolTest, BadArgumentsNameTheJsonPath) {
  EXPECT_THAT(ErrorText(Call({{"action", "bogus"}})), HasSubstr("arguments.action"));
  EXPECT_THAT(ErrorText(Call({{"action", "diff"}, {"repo", repos_.work.string()}})), HasSubstr("arguments.baseline"));
  EXPECT_THAT(ErrorText(Call({{"classes", {{"model.py", "D"}}}})), HasSubstr("arguments.classes[\"model.py\"]"));
  EXPECT_THAT(ErrorText(Call({{"repo", 3}})), HasSubstr("arguments.repo"));
  EXPECT_THAT(ErrorText(Call({{"baseline_branch", "master"}})), HasSubstr("baseline_branch"));
  EXPECT_THAT(ErrorText(Call({{"repo", tmp_.path().string()}})), HasSubstr("not inside a git repository"));
}

TEST_F(AuditWorkspaceToolTest, DiffRefusesAnAmbiguousBaselineAndNamesTheCandidates) {
  std::string text = ErrorText(Call({{"action", "diff"}, {"repo", repos_.work.string()}, {"baseline", "master"}}));
  EXPECT_THAT(text, HasSubstr("ambiguous"));
  EXPECT_THAT(text, HasSubstr("origin/master"));
  EXPECT_THAT(text, HasSubstr("cann/master"));
  std::string unknown = ErrorText(Call({{"action", "diff"}, {"repo", repos_.work.string()}, {"baseline", "nope"}}));
  EXPECT_THAT(unknown, HasSubstr("unknown revision 'nope'"));
}

TEST_F(AuditWorkspaceToolTest, PrepareAsksTheUserThenCreatesWorktreesAndCleanupRemovesThem) {
  auto before = git::testing::Fingerprint(repos_.work);
  json args = {{"action", "prepare"}, {"repo", repos_.work.string()}, {"baseline", "cann/master"}};

  // A client without elicitation is refused: the classes are the user's to confirm, and
  // no confirmation token (which the caller could answer itself) is offered.
  auto fallback = Call(args);
  EXPECT_TRUE(fallback.confirmation.is_null()) << fallback.result.dump(2);
  EXPECT_THAT(ErrorText(fallback), HasSubstr("must be confirmed by the user"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-baseline"));

  // A 2026-07-28 client: input_required, nothing created yet.
  auto first = CallModern(args);
  ASSERT_TRUE(first.input_required) << first.result.dump(2);
  ASSERT_EQ(first.result["inputRequests"].size(), 1u);
  const std::string key = first.result["inputRequests"].begin().key();
  const json& question = first.result["inputRequests"][key];
  EXPECT_EQ(question["method"], "elicitation/create");
  const json& fields = question["params"]["requestedSchema"]["properties"];
  EXPECT_EQ(fields["scripts/run_train.sh"]["default"], "B");
  EXPECT_EQ(fields["notes.txt"]["default"], "ignore");
  EXPECT_EQ(fields["README.md"]["default"], "A");  // cann's fix is not in the candidate: a committed difference
  EXPECT_EQ(fields["notes.txt"]["enum"], json({"B", "C", "ignore"}));
  EXPECT_THAT(fields["scripts/run_train.sh"]["description"].get<std::string>(), HasSubstr("both sides"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-baseline"));

  // The user accepts, moving notes.txt to the candidate.
  json content = json::object();
  for (auto& [path, field] : fields.items()) content[path] = field["default"];
  content["notes.txt"] = "C";
  json responses = json::object();
  responses[key] = {{"action", "accept"}, {"content", content}};
  json out = Structured(CallModern(args, first.result["requestState"].get<std::string>(), responses));
  ASSERT_TRUE(out.contains("prepare")) << out.dump(2);
  EXPECT_EQ(out["prepare"]["classes"]["notes.txt"], "C");
  EXPECT_EQ(out["prepare"]["baseline_worktree"]["path"], (tmp_.path() / "proj-baseline").string());
  EXPECT_EQ(out["prepare"]["infra_tarball"], "infra_files.tar.gz");
  EXPECT_EQ(out["diff"]["baseline"]["commit"], repos_.cann_tip);
  EXPECT_TRUE(fs::exists(tmp_.path() / "proj-candidate/notes.txt"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-baseline/notes.txt"));
  EXPECT_TRUE(fs::exists(tmp_.path() / "report/infra_files.tar.gz"));

  // A second prepare finds them in its way: told not to remove them, it refuses, naming them
  // and the command that removes them.
  json again = args;
  again["classes"] = out["prepare"]["classes"];
  again["remove_stale"] = false;
  std::string refused = ErrorText(CallAsUser(again));
  EXPECT_THAT(refused, HasSubstr("earlier run"));
  EXPECT_THAT(refused, HasSubstr("parity call audit_workspace"));

  json audit = Structured(Call({{"repo", repos_.work.string()}}));
  ASSERT_EQ(audit["audit"]["worktrees"].size(), 2u);
  EXPECT_EQ(audit["audit"]["worktrees"][0]["parity_owned"], true);

  json cleaned = Structured(Call({{"action", "cleanup"}, {"repo", repos_.work.string()}}));
  EXPECT_EQ(cleaned["cleanup"]["removed"].size(), 2u);
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-baseline"));
  EXPECT_THAT(ErrorText(Call({{"action", "cleanup"}, {"repo", repos_.work.string()}})), HasSubstr("no parity worktrees"));

  EXPECT_EQ(git::testing::FingerprintDiff(before, git::testing::Fingerprint(repos_.work)), "");
}

// `classes` from an MCP caller are only the form's defaults; written by the user on
// parity's command line they are the answer.
TEST_F(AuditWorkspaceToolTest, ClassesInTheArgumentsSkipTheQuestionOnlyOnTheUsersCommandLine) {
  json diff = Structured(Call({{"action", "diff"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"}}));
  json classes = json::object();
  for (const auto& f : diff["diff"]["files"]) classes[f["path"].get<std::string>()] = f["proposed"];
  json args = {{"action", "prepare"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"},
               {"classes", classes}, {"baseline_path", (tmp_.path() / "b").string()},
               {"candidate_path", (tmp_.path() / "c").string()}};
  EXPECT_THAT(ErrorText(Call(args)), HasSubstr("must be confirmed by the user"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "b"));
  json changed = args;
  changed["classes"]["utils/helper.py"] = "ignore";
  auto asked = CallModern(changed);
  ASSERT_TRUE(asked.input_required) << asked.result.dump(2);
  const json& fields = asked.result["inputRequests"].begin().value()["params"]["requestedSchema"]["properties"];
  EXPECT_EQ(fields["utils/helper.py"]["default"], "ignore");
  EXPECT_FALSE(fs::exists(tmp_.path() / "b"));

  auto inv = CallAsUser(args);
  json out = Structured(inv);
  EXPECT_TRUE(inv.confirmation.is_null());
  EXPECT_EQ(out["prepare"]["candidate_worktree"]["path"], (tmp_.path() / "c").string());
  EXPECT_TRUE(fs::exists(tmp_.path() / "b/scripts/run_train.sh"));
}

// No argument can answer for the user: neither a confirmations token nor answers keyed
// like the user's.
TEST_F(AuditWorkspaceToolTest, NoArgumentAnswersForTheUser) {
  json args = {{"action", "prepare"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"}};
  auto first = CallModern(args);
  ASSERT_TRUE(first.input_required);
  const std::string key = first.result["inputRequests"].begin().key();
  EXPECT_EQ(key.rfind(mcp::kUserAnswerPrefix, 0), 0u) << key;
  json content = json::object();
  for (auto& [path, field] : first.result["inputRequests"][key]["params"]["requestedSchema"]["properties"].items()) {
    content[path] = field["default"];
  }
  json answers = json::object();
  answers[key] = {{"action", "accept"}, {"content", content}};
  // The signed state handed to the client, replayed by the caller as a confirmation token.
  auto forged = Call(args, {{"token", first.result["requestState"]}, {"answers", answers}});
  EXPECT_THAT(ErrorText(forged), HasSubstr("must be confirmed by the user"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-candidate"));
}

TEST_F(AuditWorkspaceToolTest, DeclinedConfirmationCreatesNothing) {
  json args = {{"action", "prepare"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"}};
  auto first = CallModern(args);
  ASSERT_TRUE(first.input_required);
  json responses = json::object();
  responses[first.result["inputRequests"].begin().key()] = {{"action", "decline"}};
  std::string text = ErrorText(CallModern(args, first.result["requestState"].get<std::string>(), responses));
  EXPECT_THAT(text, HasSubstr("not confirmed"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-baseline"));
  EXPECT_FALSE(fs::exists(tmp_.path() / "proj-candidate"));
}

TEST_F(AuditWorkspaceToolTest, AnEarlierRunsWorktreesInTheWayAreRemovedOnlyWhenTheUserSaysSo) {
  json diff = Structured(Call({{"action", "diff"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"}}));
  json classes = json::object();
  for (const auto& f : diff["diff"]["files"]) classes[f["path"].get<std::string>()] = f["proposed"];
  json args = {{"action", "prepare"}, {"repo", repos_.work.string()}, {"baseline", "origin/master"}, {"classes", classes}};
  Structured(CallAsUser(args));  // the earlier run, which never cleaned up

  // An MCP caller's remove_stale=true is no answer: the user is asked (after the classes).
  args["remove_stale"] = true;
  auto first = CallModern(args);
  ASSERT_TRUE(first.input_required) << first.result.dump(2);
  std::string key = first.result["inputRequests"].begin().key();
  json content = json::object();
  for (auto& [path, field] : first.result["inputRequests"][key]["params"]["requestedSchema"]["properties"].items()) {
    content[path] = field["default"];
  }
  json responses = json::object();
  responses[key] = {{"action", "accept"}, {"content", content}};
  auto second = CallModern(args, first.result["requestState"].get<std::string>(), responses);
  ASSERT_TRUE(second.input_required) << second.result.dump(2);
  key = second.result["inputRequests"].begin().key();
  EXPECT_THAT(key, HasSubstr("audit_workspace.stale."));
  EXPECT_THAT(second.result["inputRequests"][key]["params"]["message"].get<std::string>(),
              HasSubstr((tmp_.path() / "proj-baseline").string()));
  EXPECT_TRUE(fs::exists(tmp_.path() / "proj-baseline/scripts/run_train.sh")) << "nothing removed before the answer";

  // The user's own remove_stale (parity's command line) stands: removed first, made again.
  json out = Structured(CallAsUser(args));
  EXPECT_EQ(out["prepare"]["removed_stale"].size(), 2u);
  EXPECT_TRUE(fs::exists(tmp_.path() / "proj-baseline/scripts/run_train.sh"));
}

}  // namespace
}  // namespace parity::tools
