// probe_env through its MCP adapter: argument errors name the JSON path, the result matches
// the declared shape, the probe lands in the ledger, compare_with lists differences.
#include "tools/probe_env/probe_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "tests/env/ascend_fixture.h"
#include "tests/common/fake_tool_context.h"

namespace parity::tools {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class ProbeEnvToolTest : public ::testing::Test {
 protected:
  ProbeEnvToolTest() : ctx_(fake_.root() / "report") {}
  mcp::ToolResult Call(const json& args) { return MakeProbeEnvTool().handler(args, ctx_); }
  std::string ErrorText(const mcp::ToolResult& r) { return r.structured["error"].dump(); }

  testing::AscendFixture fake_;
  testing::FakeContext ctx_;
};

TEST_F(ProbeEnvToolTest, BadArgumentsNameTheirPath) {
  auto r = Call({{"timeout_s", "soon"}});
  ASSERT_TRUE(r.is_error);
  EXPECT_THAT(ErrorText(r), HasSubstr("arguments.timeout_s: expected integer"));
  r = Call({{"serach_paths", json::array()}});
  ASSERT_TRUE(r.is_error);
  EXPECT_THAT(ErrorText(r), HasSubstr("serach_paths"));
  r = Call({{"mode", "remote"}});
  ASSERT_TRUE(r.is_error);
  EXPECT_THAT(ErrorText(r), HasSubstr("arguments.ssh: required when mode is remote"));
}

TEST_F(ProbeEnvToolTest, PasswordInArgumentsIsRefused) {
  auto r = Call({{"mode", "remote"}, {"ssh", {{"host", "10.0.0.1"}, {"username", "root"}, {"password", "hunter2"}}}});
  ASSERT_TRUE(r.is_error);
  EXPECT_THAT(ErrorText(r), HasSubstr("password_env"));
  EXPECT_THAT(r.content.dump(), ::testing::Not(HasSubstr("hunter2")));
}

// A PATH (or any variable outside the policy's env.set) for the probe puts programs of the
// caller's choosing in front of parity's: the user is asked, and nothing runs without consent.
TEST_F(ProbeEnvToolTest, VariablesOutsideThePolicyAreAskedFirst) {
  json env = {{"PATH", (fake_.root() / "bin").string()}, {"HCCL_DETERMINISTIC", "true"}};
  auto refused = Call({{"env", env}, {"record", false}});
  ASSERT_TRUE(refused.is_error);
  EXPECT_THAT(refused.content.dump(), HasSubstr("refused by the user's policy"));
  EXPECT_THAT(refused.content.dump(), HasSubstr("PATH"));
  EXPECT_THAT(refused.content.dump(), ::testing::Not(HasSubstr("are not in the policy's env.set list: HCCL")));
  ctx_.answer_user(mcp::ElicitAnswer::Action::kDecline);
  auto declined = Call({{"env", env}, {"record", false}});
  ASSERT_TRUE(declined.is_error);
  EXPECT_THAT(declined.content.dump(), HasSubstr("the user declined"));
  ASSERT_EQ(ctx_.asked().size(), 1u);
  EXPECT_THAT(ctx_.asked()[0], HasSubstr("environment set: HCCL_DETERMINISTIC=true PATH=" + (fake_.root() / "bin").string()));
  auto python = Call({{"python", "bash"}, {"record", false}});
  EXPECT_TRUE(python.is_error);
  EXPECT_THAT(ctx_.asked().back(), HasSubstr("bash -c"));
}

TEST_F(ProbeEnvToolTest, ProbesRecordsAndCompares) {
  json env = json::object();
  for (const auto& [k, v] : fake_.AscendEnv()) env[k] = v;
  json args = {{"search_paths", {fake_.ascend().string()}}, {"dev_dir", fake_.dev().string()}, {"env", env}};
  ctx_.answer_user(mcp::ElicitAnswer::Action::kAccept);  // the stand-in npu-smi on PATH, ASCEND_*
  auto first = Call(args);
  ASSERT_FALSE(first.is_error) << first.content.dump();
  const json& out = first.structured;
  for (const char* key : {"host", "accelerator", "anomalies", "fingerprint", "cann", "npu", "python"}) {
    EXPECT_TRUE(out.contains(key)) << key;
  }
  EXPECT_THAT(first.content[0]["text"].get<std::string>(), HasSubstr("torch_npu_import_failed"));

  auto manifest = ledger::Read(fake_.root() / "report");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const json& entry = (*manifest)["entries"].back();
  EXPECT_EQ(entry["tool"], "probe_env");
  EXPECT_EQ(entry["id"], out["ledger_entry"]);
  EXPECT_EQ(entry["environment"]["sha256"], out["fingerprint"]["sha256"]);

  args["env"]["PYTHONHASHSEED"] = "0";
  args["compare_with"] = out["fingerprint"];
  args["record"] = false;
  auto second = Call(args);
  ASSERT_FALSE(second.is_error);
  ASSERT_EQ(second.structured["differences"].size(), 1u) << second.structured["differences"].dump();
  EXPECT_EQ(second.structured["differences"][0]["key"], "/env/PYTHONHASHSEED");
  EXPECT_EQ(second.structured["ledger_entry"], nullptr);
}

}  // namespace
}  // namespace parity::tools
