// inject_prints' analysers: DeepSeek against a stand-in OpenAI-compatible server on loopback
// (correct, malformed, invented-name answers; 500, 401, timeout, oversized reply, cancel),
// MCP sampling through a fake client, and the fallback to Python's ast under "auto". The
// injected probes of a model's choice are run under Debian's PyTorch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "domain/inject/analyser.h"
#include "domain/inject/openai_client.h"
#include "tests/common/fake_tool_context.h"
#include "tests/inject/fake_chat_server.h"
#include "tests/inject/inject_fixture.h"
#include "tools/inject_prints/inject_prints.h"

namespace parity::inject {
namespace {

constexpr const char* kKey = "test-key-8f2c1d";
constexpr const char* kModelName = "deepseek-chat";
constexpr const char* kLine18 = "h = F.gelu(self.fc1(x), approximate=self.approximate)";

// A client that offers sampling and answers every createMessage with `answer`.
class SamplingContext : public testing::FakeContext {
 public:
  SamplingContext(fs::path report_dir, std::function<Result<json>(const json&)> answer)
      : FakeContext(std::move(report_dir)), answer_(std::move(answer)) {}
  bool CanSample() const override { return true; }
  Result<json> Sample(std::string_view key, const json& params) override {
    keys.emplace_back(key);
    requests.push_back(params);
    return answer_(params);
  }
  std::vector<std::string> keys;
  std::vector<json> requests;

 private:
  std::function<Result<json>(const json&)> answer_;
};

json SamplingText(const std::string& text) {
  return {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", text}}}, {"model", "client-model"},
          {"stopReason", "endTurn"}};
}

class AnalyserTest : public InjectTest {
 protected:
  void SetUp() override {
    InjectTest::SetUp();
    for (const char* proxy : {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"}) unsetenv(proxy);
    unsetenv("DEEPSEEK_BASE_URL");
    unsetenv("DEEPSEEK_MODEL");
    setenv("DEEPSEEK_API_KEY", kKey, 1);
    server_ = std::make_unique<FakeChatServer>(kKey, kModelName, kLine18);
  }
  void TearDown() override {
    server_.reset();
    unsetenv("DEEPSEEK_API_KEY");
    InjectTest::TearDown();
  }

  json Args(const std::string& action, const std::string& analyser) {
    return {{"action", action}, {"worktree", worktree_.string()}, {"analyser", analyser},
            {"targets", json::array({{{"file", "pkg/model.py"}, {"line", 18}}})},
            {"deepseek", {{"base_url", server_->base_url()}, {"timeout_s", 5}, {"connect_timeout_s", 5},
                          {"max_attempts", 3}, {"backoff_s", 0.01}}},
            {"report_dir", (root_ / "report").string()}};
  }
  // The test user's policy names the stand-in endpoint with the key (support/policy.h):
  // the key goes nowhere else.
  mcp::ToolResult Call(const json& args, testing::FakeContext* ctx = nullptr) {
    testing::FakeContext plain(root_ / "report");
    testing::FakeContext& c = ctx ? *ctx : plain;
    policy::Policy allowed = c.policy();
    allowed.AddEndpoint({server_->base_url(), "DEEPSEEK_API_KEY", "test: the stand-in endpoint"});
    c.set_policy(std::move(allowed));
    mcp::ToolResult r = tools::MakeInjectPrintsTool().handler(args, c);
    // The key never appears in what the tool returns, nor in the ledger.
    EXPECT_EQ(r.content.dump().find(kKey), std::string::npos) << r.content.dump();
    EXPECT_EQ(r.structured.dump().find(kKey), std::string::npos);
    EXPECT_EQ(ReadAll(root_ / "report/manifest.json").find(kKey), std::string::npos);
    return r;
  }
  void ExpectRequestsWellFormed() {
    for (const auto& p : server_->problems()) ADD_FAILURE() << "stand-in server: " << p;
  }

  std::unique_ptr<FakeChatServer> server_;
};

TEST_F(AnalyserTest, DeepSeekDecidesAndTheInjectedProbesPrintItsNames) {
  // The ast would probe x and self.approximate; the model chooses x only, and h after.
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", R"({"inputs": ["x"], "outputs": ["h"]})", {}}; });
  auto r = Call(Args("inject", "deepseek"));
  ASSERT_FALSE(r.is_error) << r.content.dump();
  ExpectRequestsWellFormed();
  EXPECT_EQ(server_->requests(), 1);
  EXPECT_EQ(r.structured["analyser"], "deepseek");
  const json& analysis = r.structured["analysis"];
  EXPECT_EQ(analysis["requested"], "deepseek");
  EXPECT_EQ(analysis["targets"][0]["analyser"], "deepseek");
  EXPECT_EQ(analysis["targets"][0]["analysis"]["inputs"], json({"x"}));
  EXPECT_EQ(analysis["targets"][0]["analysis"]["model_answer"]["model"], kModelName);
  EXPECT_EQ(analysis["attempts"].size(), 1u);
  EXPECT_TRUE(analysis["attempts"][0]["ok"].get<bool>());

  ProcessResult run = RunCmd({"/usr/bin/python3", "pkg/model.py"}, worktree_);
  ASSERT_TRUE(run.success()) << run.err << run.out;
  std::vector<std::string> seen;
  for (const json& p : ProbeLines(run.out)) {
    ASSERT_TRUE(p.is_object());
    EXPECT_EQ(p["site"], "pkg/model.py:18");
    seen.push_back(p["when"].get<std::string>() + " " + p["name"].get<std::string>());
    if (p["name"] == "h") {
      EXPECT_EQ(p["shape"], json({2, 8}));
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"before x", "after h"}));

  auto reverted = Call({{"action", "revert"}, {"worktree", worktree_.string()}, {"report_dir", (root_ / "report").string()}});
  ASSERT_FALSE(reverted.is_error) << reverted.content.dump();
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  EXPECT_NE(ReadAll(root_ / "report/manifest.json").find("\"deepseek\""), std::string::npos);
}

TEST_F(AnalyserTest, MalformedJsonFallsBackUnderAutoAndIsAnErrorWhenChosen) {
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", "{\"inputs\": [\"x\", ", {}}; });
  auto chosen = Call(Args("analyze", "deepseek"));
  ASSERT_TRUE(chosen.is_error);
  EXPECT_NE(chosen.content.dump().find("answer: not JSON"), std::string::npos) << chosen.content.dump();
  EXPECT_EQ(chosen.structured["error"]["evidence"]["answer_excerpt"], "{\"inputs\": [\"x\", ");

  auto fallback = Call(Args("analyze", "auto"));
  ASSERT_FALSE(fallback.is_error) << fallback.content.dump();
  ExpectRequestsWellFormed();
  EXPECT_EQ(fallback.structured["analyser"], "python-ast");
  const json& attempts = fallback.structured["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump();
  EXPECT_EQ(attempts[0]["analyser"], "deepseek");
  EXPECT_FALSE(attempts[0]["ok"].get<bool>());
  EXPECT_NE(attempts[0]["message"].get<std::string>().find("not JSON"), std::string::npos);
  EXPECT_EQ(attempts[1]["analyser"], "python-ast");
  EXPECT_EQ(fallback.structured["targets"][0]["analysis"]["inputs"], json({"x", "self.approximate"}));
}

TEST_F(AnalyserTest, AnAnswerNamingAVariableNotInTheCodeIsRejected) {
  server_->Respond([](int) {
    return FakeChatServer::Reply{200, "", R"({"inputs": ["x", "weight_decay"], "outputs": ["h"]})", {}};
  });
  auto r = Call(Args("inject", "deepseek"));
  ASSERT_TRUE(r.is_error);
  EXPECT_NE(r.content.dump().find("answer.inputs[1]: \\\"weight_decay\\\" is not a value line 18 reads"), std::string::npos)
      << r.content.dump();
  EXPECT_EQ(ReadAll(worktree_ / "pkg/model.py"), original_);
  EXPECT_FALSE(fs::exists(worktree_ / "_parity_probe.py"));
  // A call or a keyword name is not a value either.
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", R"({"inputs": ["approximate"], "outputs": []})", {}}; });
  EXPECT_TRUE(Call(Args("analyze", "deepseek")).is_error);
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", R"j({"inputs": ["self.fc1(x)"], "outputs": []})j", {}}; });
  EXPECT_TRUE(Call(Args("analyze", "deepseek")).is_error);
  // And the schema is checked with the JSON path of the fault.
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", R"({"inputs": "x", "outputs": []})", {}}; });
  auto schema = Call(Args("analyze", "deepseek"));
  EXPECT_NE(schema.content.dump().find("answer.inputs"), std::string::npos) << schema.content.dump();
  ExpectRequestsWellFormed();
}

TEST_F(AnalyserTest, Http500IsRetriedThenFallsBackOrFailsWithStatusAndBody) {
  server_->Respond([](int) { return FakeChatServer::Reply{500, "upstream overloaded, try later", "", {}}; });
  auto fallback = Call(Args("analyze", "auto"));
  ASSERT_FALSE(fallback.is_error) << fallback.content.dump();
  EXPECT_EQ(server_->requests(), 3);  // max_attempts
  EXPECT_EQ(fallback.structured["analyser"], "python-ast");
  const json& failed = fallback.structured["attempts"][0];
  EXPECT_EQ(failed["kind"], "unavailable");
  EXPECT_EQ(failed["evidence"]["http_status"], "500");
  EXPECT_EQ(failed["evidence"]["attempts"], "3");
  EXPECT_EQ(failed["evidence"]["url"], server_->base_url() + "/chat/completions");
  EXPECT_NE(failed["evidence"]["body_excerpt"].get<std::string>().find("upstream overloaded"), std::string::npos);

  auto chosen = Call(Args("analyze", "deepseek"));
  ASSERT_TRUE(chosen.is_error);
  const std::string text = chosen.content.dump();
  EXPECT_NE(text.find("HTTP 500"), std::string::npos) << text;
  EXPECT_NE(text.find("upstream overloaded"), std::string::npos) << text;
  EXPECT_EQ(server_->requests(), 6);
  ExpectRequestsWellFormed();
}

TEST_F(AnalyserTest, A429IsRetriedAndTheRetryCanSucceed) {
  server_->Respond([](int n) {
    if (n == 1) return FakeChatServer::Reply{429, R"({"error": {"message": "rate limited"}})", "", {}};
    return FakeChatServer::Reply{200, "", R"({"inputs": ["x"], "outputs": ["h"]})", {}};
  });
  auto r = Call(Args("analyze", "deepseek"));
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(server_->requests(), 2);
  EXPECT_EQ(r.structured["targets"][0]["analysis"]["model_answer"]["attempts"], 2);
  ExpectRequestsWellFormed();
}

TEST_F(AnalyserTest, Http401IsNotRetriedAndTheKeyIsNotEchoed) {
  // The body echoes the key, as some gateways do; the excerpt must not carry it.
  server_->Respond([](int) {
    return FakeChatServer::Reply{401, std::string(R"({"error": {"message": "Authentication Fails, key )") + kKey + "\"}}", "", {}};
  });
  auto r = Call(Args("analyze", "deepseek"));
  ASSERT_TRUE(r.is_error);
  EXPECT_EQ(server_->requests(), 1);
  EXPECT_NE(r.content.dump().find("HTTP 401"), std::string::npos) << r.content.dump();
  EXPECT_NE(r.content.dump().find("Authentication Fails"), std::string::npos);
  EXPECT_NE(r.content.dump().find("DEEPSEEK_API_KEY"), std::string::npos);  // the hint
}

TEST_F(AnalyserTest, ATimeoutFallsBackOrIsADeadlineError) {
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", R"({"inputs": ["x"], "outputs": ["h"]})", std::chrono::seconds(20)}; });
  json args = Args("analyze", "deepseek");
  args["deepseek"]["timeout_s"] = 0.3;
  args["deepseek"]["max_attempts"] = 2;
  auto chosen = Call(args);
  ASSERT_TRUE(chosen.is_error);
  EXPECT_EQ(chosen.structured["error"]["kind"], "deadline exceeded") << chosen.content.dump();
  EXPECT_EQ(server_->requests(), 2);
  args["analyser"] = "auto";
  auto fallback = Call(args);
  ASSERT_FALSE(fallback.is_error) << fallback.content.dump();
  EXPECT_EQ(fallback.structured["analyser"], "python-ast");
  EXPECT_EQ(fallback.structured["attempts"][0]["kind"], "deadline exceeded");
}

TEST_F(AnalyserTest, AFailedEndpointIsNotAskedAgainForTheNextTarget) {
  server_->Respond([](int) { return FakeChatServer::Reply{503, "maintenance", "", {}}; });
  json args = Args("analyze", "auto");
  args["targets"].push_back({{"file", "pkg/model.py"}, {"function", "scale"}});
  auto r = Call(args);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(server_->requests(), 3);
  const json& attempts = r.structured["attempts"];
  ASSERT_EQ(attempts.size(), 4u) << attempts.dump();
  EXPECT_EQ(attempts[2]["skipped"], "it failed on an earlier target");
  EXPECT_EQ(r.structured["targets"][1]["analyser"], "python-ast");
}

TEST_F(AnalyserTest, EachTargetIsReportedAsProgress) {
  testing::FakeContext ctx(root_ / "report");
  json args = Args("analyze", "ast");
  args["targets"].push_back({{"file", "pkg/model.py"}, {"function", "scale"}});
  ASSERT_FALSE(Call(args, &ctx).is_error);
  auto steps = ctx.progress();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].message, "analysing pkg/model.py:18");
  EXPECT_EQ(steps[1].message, "analysing pkg/model.py:scale");
  EXPECT_EQ(steps[1].total, 2.0);
}

TEST_F(AnalyserTest, AnOversizedReplyIsRefused) {
  server_->Respond([](int) { return FakeChatServer::Reply{200, std::string(8192, 'x'), "", {}}; });
  json args = Args("analyze", "deepseek");
  args["deepseek"]["max_response_bytes"] = 1024;
  auto r = Call(args);
  ASSERT_TRUE(r.is_error);
  EXPECT_NE(r.content.dump().find("larger than 1024 bytes"), std::string::npos) << r.content.dump();
}

TEST_F(AnalyserTest, CancellationStopsTheRequestAndDoesNotFallBack) {
  server_->Respond([](int) { return FakeChatServer::Reply{200, "", "{}", std::chrono::seconds(20)}; });
  testing::FakeContext ctx(root_ / "report");
  std::thread canceller([&] {
    for (int i = 0; i < 2000 && !server_->received(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ctx.Cancel();
  });
  auto r = Call(Args("analyze", "auto"), &ctx);
  canceller.join();
  ASSERT_TRUE(r.is_error);
  EXPECT_EQ(r.structured["error"]["kind"], "cancelled") << r.content.dump();
}

TEST_F(AnalyserTest, SamplingDecidesWithTheClientsModel) {
  unsetenv("DEEPSEEK_API_KEY");  // auto: no key, so sampling comes first
  SamplingContext ctx(root_ / "report", [](const json&) -> Result<json> {
    return SamplingText("```json\n{\"inputs\": [\"self.approximate\", \"x\"], \"outputs\": [\"h\"]}\n```");
  });
  auto r = Call(Args("analyze", "auto"), &ctx);
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ(r.structured["analyser"], "sampling");
  EXPECT_EQ(r.structured["targets"][0]["analysis"]["inputs"], json({"self.approximate", "x"}));
  EXPECT_EQ(r.structured["targets"][0]["analysis"]["model_answer"]["model"], "client-model");
  ASSERT_EQ(ctx.requests.size(), 1u);
  const json& request = ctx.requests[0];
  EXPECT_NE(request["systemPrompt"].get<std::string>().find("JSON"), std::string::npos);
  EXPECT_GT(request["maxTokens"].get<int>(), 0);
  EXPECT_NE(request["messages"][0]["content"]["text"].get<std::string>().find(kLine18), std::string::npos);
  EXPECT_EQ(server_->requests(), 0);
  // The same question has the same key (it identifies the answer across MRTR rounds).
  Call(Args("analyze", "sampling"), &ctx);
  ASSERT_EQ(ctx.keys.size(), 2u);
  EXPECT_EQ(ctx.keys[0], ctx.keys[1]);
}

TEST_F(AnalyserTest, InvalidSamplingAnswersFallBackOrFail) {
  unsetenv("DEEPSEEK_API_KEY");
  SamplingContext ctx(root_ / "report",
                      [](const json&) -> Result<json> { return SamplingText(R"({"inputs": ["loss"], "outputs": []})"); });
  auto chosen = Call(Args("analyze", "sampling"), &ctx);
  ASSERT_TRUE(chosen.is_error);
  EXPECT_NE(chosen.content.dump().find("answer.inputs[0]"), std::string::npos) << chosen.content.dump();
  auto fallback = Call(Args("analyze", "auto"), &ctx);
  ASSERT_FALSE(fallback.is_error) << fallback.content.dump();
  EXPECT_EQ(fallback.structured["analyser"], "python-ast");
  EXPECT_EQ(fallback.structured["attempts"][0]["analyser"], "sampling");

  SamplingContext no_text(root_ / "report", [](const json&) -> Result<json> {
    return json{{"role", "assistant"}, {"content", {{"type", "image"}, {"data", ""}, {"mimeType", "image/png"}}}};
  });
  auto image = Call(Args("analyze", "sampling"), &no_text);
  ASSERT_TRUE(image.is_error);
  EXPECT_NE(image.content.dump().find("no text content"), std::string::npos);
}

TEST_F(AnalyserTest, AnAnswerDueInALaterRoundIsNotAFailure) {
  unsetenv("DEEPSEEK_API_KEY");
  SamplingContext ctx(root_ / "report", [](const json&) -> Result<json> {
    return Status(ErrorKind::kInputRequired, "waiting for the client's answer");
  });
  json args = Args("analyze", "auto");
  args["targets"].push_back({{"file", "pkg/model.py"}, {"function", "scale"}});
  auto r = Call(args, &ctx);
  ASSERT_TRUE(r.is_error);
  EXPECT_EQ(r.structured["error"]["kind"], "input required");
  EXPECT_EQ(ctx.requests.size(), 2u);  // both questions asked in the same round
}

TEST_F(AnalyserTest, ExplicitChoicesNeedTheirPrerequisites) {
  unsetenv("DEEPSEEK_API_KEY");
  auto no_key = Call(Args("analyze", "deepseek"));
  EXPECT_NE(no_key.content.dump().find("DEEPSEEK_API_KEY"), std::string::npos);
  auto no_sampling = Call(Args("analyze", "sampling"));
  EXPECT_NE(no_sampling.content.dump().find("sampling capability"), std::string::npos);
  setenv("DEEPSEEK_API_KEY", kKey, 1);
  json args = Args("analyze", "auto");
  args["deepseek"]["base_url"] = "http://api.example.com";
  auto clear_text = Call(args);
  ASSERT_TRUE(clear_text.is_error);
  EXPECT_NE(clear_text.content.dump().find("plain http is allowed only to a loopback host"), std::string::npos);
  args["deepseek"]["timeout_s"] = 0;
  EXPECT_NE(Call(args).content.dump().find("arguments.deepseek.timeout_s"), std::string::npos);
  EXPECT_EQ(server_->requests(), 0);
}

// The source and the key go only to the endpoint the user's policy names with the key: a
// base_url of the caller's is refused before any request, whatever the analyser.
TEST_F(AnalyserTest, AnEndpointOutsideThePolicyGetsNothing) {
  for (const char* analyser : {"deepseek", "auto"}) {
    json args = Args("analyze", analyser);
    args["deepseek"]["base_url"] = server_->base_url() + "/elsewhere";
    auto r = Call(args);
    ASSERT_TRUE(r.is_error) << analyser;
    EXPECT_NE(r.content.dump().find("refused by the user's policy"), std::string::npos) << r.content.dump();
    EXPECT_NE(r.content.dump().find("never sent to"), std::string::npos) << r.content.dump();
  }
  EXPECT_EQ(server_->requests(), 0);
}

// The model's choice for a function: which parameters (a subset of the real ones); the
// returned expressions it names are checked, and every return is still probed.
TEST_F(AnalyserTest, FunctionAnswersAreCheckedAgainstTheFunction) {
  auto ast = Analyze(Opts({{"pkg/model.py", std::nullopt, "scale", false}}));
  ASSERT_TRUE(ast.ok()) << ast.status().ToString();
  Question q{"pkg/model.py", ReadAll(worktree_ / "pkg/model.py"), "pkg/model.py:scale", (*ast)["targets"][0]["analysis"]};
  auto prompt = BuildPrompt(q);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_NE(prompt->user.find("    6 > def scale(x, factor=2.0):\n    7       y = x * factor"), std::string::npos) << prompt->user;
  EXPECT_NE(prompt->user.find("[\"y, factor\"]"), std::string::npos) << prompt->user;

  auto good = ApplyAnswer(q, R"({"params": ["x"], "returns": ["return y, factor"]})");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ((*good)["params"], json({"x"}));
  EXPECT_EQ((*good)["returns"].size(), 1u);
  auto invented = ApplyAnswer(q, R"({"params": ["x", "lr"], "returns": []})");
  ASSERT_FALSE(invented.ok());
  EXPECT_NE(invented.status().message().find("answer.params[1]"), std::string::npos) << invented.status().message();
  auto wrong_return = ApplyAnswer(q, R"({"params": ["x"], "returns": ["y"]})");
  ASSERT_FALSE(wrong_return.ok());
  EXPECT_NE(wrong_return.status().message().find("answer.returns[0]"), std::string::npos);
  auto extra = ApplyAnswer(q, R"({"params": ["x"], "returns": [], "why": "because"})");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("why"), std::string::npos) << extra.status().message();
}

TEST(OpenAiClient, UrlsAreShownWithoutCredentials) {
  EXPECT_EQ(RedactUrl("https://user:secret@api.example.com/v1?key=abc"), "https://api.example.com/v1");
  EXPECT_EQ(RedactUrl("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
  ChatEndpoint e;
  e.api_key = "k";
  EXPECT_TRUE(ValidateEndpoint(e).ok());
  e.base_url = "ftp://example.com";
  EXPECT_FALSE(ValidateEndpoint(e).ok());
  e.base_url = "http://localhost:9/v1";
  EXPECT_TRUE(ValidateEndpoint(e).ok());
  e.api_key.clear();
  EXPECT_EQ(ValidateEndpoint(e).kind(), ErrorKind::kFailedPrecondition);
}

}  // namespace
}  // namespace parity::inject
