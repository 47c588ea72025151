#include "support/json_reader.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

struct Params {
  std::vector<std::string> paths;
  std::string format = "auto";
  std::optional<double> tolerance;
  int rank = 0;
  struct Inner { bool bitwise = false; } inner;
};

Status Decode(const json& j, Params& p) {
  JsonReader r(j, "arguments");
  r.Required("paths", p.paths).Optional("format", p.format).Optional("tolerance", p.tolerance)
      .Optional("rank", p.rank)
      .Object("inner", false, [&](JsonReader& in) { in.Optional("bitwise", p.inner.bitwise); });
  r.OneOf("format", p.format, {"auto", "torchtitan"});
  return r.Finish();
}

TEST(JsonReaderTest, DecodesTypedFields) {
  Params p;
  ASSERT_TRUE(Decode(json::parse(R"({"paths":["a","b"],"tolerance":1e-5,"rank":3,"inner":{"bitwise":true}})"), p).ok());
  EXPECT_EQ(p.paths.size(), 2u);
  EXPECT_DOUBLE_EQ(*p.tolerance, 1e-5);
  EXPECT_EQ(p.rank, 3);
  EXPECT_TRUE(p.inner.bitwise);
}

TEST(JsonReaderTest, ErrorsNameTheJsonPath) {
  Params p;
  Status s = Decode(json::parse(R"({"paths":["a",7]})"), p);
  EXPECT_EQ(s.message(), "arguments.paths[1]: expected string, got integer");
  s = Decode(json::parse(R"({"paths":[],"inner":{"bitwise":"yes"}})"), p);
  EXPECT_EQ(s.message(), "arguments.inner.bitwise: expected boolean, got string");
  s = Decode(json::parse(R"({})"), p);
  EXPECT_EQ(s.message(), "arguments.paths: required field is missing");
}

TEST(JsonReaderTest, RejectsUnknownFieldsAndValues) {
  Params p;
  Status s = Decode(json::parse(R"({"paths":[],"tolerence":1})"), p);
  EXPECT_NE(s.message().find("arguments.tolerence: unknown field"), std::string::npos);
  s = Decode(json::parse(R"({"paths":[],"format":"csv"})"), p);
  EXPECT_NE(s.message().find("arguments.format: unknown value \"csv\""), std::string::npos);
  s = Decode(json::parse(R"({"paths":[],"rank":1.5})"), p);
  EXPECT_EQ(s.message(), "arguments.rank: expected integer, got number");
}

TEST(JsonReaderTest, NonObjectIsAnError) {
  Params p;
  EXPECT_EQ(Decode(json::parse("[1]"), p).message(), "arguments: expected object, got array");
}

}  // namespace
}  // namespace parity
