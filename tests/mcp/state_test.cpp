// Small pieces: signed state, URI templates, message parsing limits, header base64.
#include <gtest/gtest.h>

#include "mcp-server/http_transport.h"
#include "mcp-server/jsonrpc.h"
#include "mcp-server/registry.h"
#include "mcp-server/signed_state.h"

namespace parity::mcp {
namespace {

TEST(SignedState, RoundTripAndBinding) {
  StateSigner signer;
  StateBinding b{"tools/call", "deploy", {{"target", "prod"}}};
  std::string token = signer.Sign(b, {{"first", {{"action", "accept"}}}});
  auto answers = signer.Verify(b, token);
  ASSERT_TRUE(answers.ok()) << answers.status().ToString();
  EXPECT_EQ((*answers)["first"]["action"], "accept");
  StateBinding other = b;
  other.target = "other";
  EXPECT_FALSE(signer.Verify(other, token).ok());
  EXPECT_FALSE(StateSigner().Verify(b, token).ok());  // another process's key
}

TEST(SignedState, ExpiredTokensAreRejected) {
  StateSigner signer;
  StateBinding b{"prompts/get", "p", json::object()};
  std::string token = signer.Sign(b, json::object(), std::chrono::seconds(-5));
  auto r = signer.Verify(b, token);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expired"), std::string::npos);
}

TEST(UriTemplate, Level1Matching) {
  auto vars = MatchUriTemplate("test://template/{id}/data", "test://template/123/data");
  ASSERT_TRUE(vars);
  EXPECT_EQ(vars->at("id"), "123");
  EXPECT_FALSE(MatchUriTemplate("test://template/{id}/data", "test://template/1/2/data"));
  EXPECT_FALSE(MatchUriTemplate("test://template/{id}/data", "test://template//data"));
  EXPECT_FALSE(MatchUriTemplate("file:///{path}", "http://x"));
}

TEST(Parse, SizeLimitAndShapes) {
  ParsedBody big = ParseBody(std::string(100, ' '), 10);
  ASSERT_EQ(big.messages.size(), 1u);
  EXPECT_EQ(std::get<ParsedError>(big.messages[0]).error.code, rpc::kInvalidRequest);
  ParsedBody notification = ParseBody(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_TRUE(std::holds_alternative<Notification>(std::get<Message>(notification.messages[0])));
  ParsedBody response = ParseBody(R"({"jsonrpc":"2.0","id":"x","result":{}})");
  EXPECT_TRUE(std::holds_alternative<Response>(std::get<Message>(response.messages[0])));
  ParsedBody null_id = ParseBody(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
  EXPECT_EQ(std::get<ParsedError>(null_id.messages[0]).error.code, rpc::kInvalidRequest);
}

TEST(HeaderBase64, StrictDecoding) {
  EXPECT_EQ(DecodeBase64Strict("SGVsbG8="), "Hello");
  EXPECT_FALSE(DecodeBase64Strict("SGVsbG8"));       // padding missing
  EXPECT_FALSE(DecodeBase64Strict("SGVs!!!bG8="));   // not the alphabet
  EXPECT_FALSE(DecodeBase64Strict("SG=sbG8="));      // data after padding
}

}  // namespace
}  // namespace parity::mcp
