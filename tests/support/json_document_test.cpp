// ParseJsonDocument: the nesting limit is checked on the text (so a 100,000-deep file is an
// error, not a stack overflow later), brackets inside strings and escaped quotes do not
// count, and invalid JSON (invalid UTF-8 included) is an error value naming the file.
#include "support/json_document.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

std::string Nested(int depth, const std::string& inner = "1") {
  std::string s;
  for (int i = 0; i < depth; ++i) s += i % 2 ? "{\"k\":" : "[";
  s += inner;
  for (int i = depth - 1; i >= 0; --i) s += i % 2 ? "}" : "]";
  return s;
}

TEST(JsonDocument, DeepNestingIsAnErrorNotACrash) {
  auto r = ParseJsonDocument(std::string(100000, '[') + std::string(100000, ']'), "hunt.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_NE(r.status().message().find("hunt.json: nesting deeper than 128 levels at byte 128"), std::string::npos)
      << r.status().message();
}

TEST(JsonDocument, TheLimitIsExact) {
  auto at = ParseJsonDocument(Nested(kMaxJsonDepth), "x");
  ASSERT_TRUE(at.ok()) << at.status().ToString();
  EXPECT_FALSE(at->dump().empty());
  EXPECT_FALSE(ParseJsonDocument(Nested(kMaxJsonDepth + 1), "x").ok());
  EXPECT_TRUE(ParseJsonDocument(Nested(3), "x", 3).ok());
  EXPECT_FALSE(ParseJsonDocument(Nested(4), "x", 3).ok());
}

TEST(JsonDocument, BracketsInStringsDoNotCount) {
  std::string deep_text = "\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"";
  auto r = ParseJsonDocument("{\"a\": " + deep_text + "}", "x");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["a"].get<std::string>().size(), 2001u);
}

TEST(JsonDocument, InvalidJsonAndInvalidUtf8AreErrorValues) {
  auto broken = ParseJsonDocument("{\"a\": ", "manifest.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("manifest.json: not valid JSON"), std::string::npos);
  auto bytes = ParseJsonDocument("{\"a\": \"\xff\xfe\"}", "state.json");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("state.json: not valid JSON"), std::string::npos);
  // Unbalanced closers are the parser's to report, not a negative depth.
  EXPECT_FALSE(ParseJsonDocument("]]]]", "x").ok());
}

}  // namespace
}  // namespace parity
