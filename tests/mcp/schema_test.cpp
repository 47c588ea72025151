// PortableSchema: the schemas tools/list sends, rewritten so every major client accepts
// them (the Inspector's --strict rules). The expected forms are written by hand from JSON
// Schema 2020-12: a `type` array means "any of these types", and each type's keywords only
// constrain instances of that type, so they move into its branch.
#include <gtest/gtest.h>

#include "mcp-server/registry.h"

namespace parity::mcp {
namespace {

TEST(PortableSchema, ATypeArrayBecomesOneBranchPerType) {
  json in = json::parse(R"({"type": ["integer", "null"], "minimum": 0, "description": "ahead"})");
  json want = json::parse(R"({"description": "ahead", "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]})");
  EXPECT_EQ(PortableSchema(in), want);
}

TEST(PortableSchema, EachTypesKeywordsGoToItsOwnBranch) {
  json in = json::parse(R"({"type": ["object", "string", "null"], "properties": {"a": {"type": ["string", "null"]}},
                            "required": ["a"], "minLength": 1, "title": "t", "default": null})");
  json want = json::parse(R"({"title": "t", "default": null, "anyOf": [
      {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, "required": ["a"]},
      {"type": "string", "minLength": 1}, {"type": "null"}]})");
  EXPECT_EQ(PortableSchema(in), want);
}

TEST(PortableSchema, NestedSchemasAreRewrittenToo) {
  json in = json::parse(R"({"type": "object", "properties": {"list": {"type": "array", "items": {"type": ["number", "null"]}}},
                            "additionalProperties": {"type": ["boolean", "string"]}})");
  json out = PortableSchema(in);
  EXPECT_EQ(out["properties"]["list"]["items"], json::parse(R"({"anyOf": [{"type": "number"}, {"type": "null"}]})"));
  EXPECT_EQ(out["additionalProperties"], json::parse(R"({"anyOf": [{"type": "boolean"}, {"type": "string"}]})"));
  EXPECT_EQ(out["type"], "object");
}

TEST(PortableSchema, AnExistingAnyOfIsKeptBesideTheTypes) {
  json in = json::parse(R"({"type": ["string", "null"], "anyOf": [{"const": "a"}, {"const": null}]})");
  json want = json::parse(R"({"allOf": [{"anyOf": [{"const": "a"}, {"const": null}]},
                                        {"anyOf": [{"type": "string"}, {"type": "null"}]}]})");
  EXPECT_EQ(PortableSchema(in), want);
}

TEST(PortableSchema, WhatIsPortableAlreadyIsUnchanged) {
  json in = json::parse(R"({"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "b"]}},
                            "required": ["x"], "additionalProperties": false})");
  EXPECT_EQ(PortableSchema(in), in);
  EXPECT_EQ(PortableSchema(json::parse(R"({"type": ["string"]})")), json::parse(R"({"type": "string"})"));
}

TEST(PortableSchema, ToolsListSendsThePortableForm) {
  ToolSpec spec;
  spec.name = "t";
  spec.description = "d";
  spec.input_schema = json::parse(R"({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}})");
  spec.output_schema = json::parse(R"({"type": "object", "properties": {"m": {"type": ["string", "null"]}}})");
  json j = ToolToJson(spec);
  EXPECT_TRUE(j["inputSchema"]["properties"]["n"].contains("anyOf"));
  EXPECT_TRUE(j["outputSchema"]["properties"]["m"].contains("anyOf"));
}

}  // namespace
}  // namespace parity::mcp
