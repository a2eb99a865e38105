#include <gtest/gtest.h>

#include "core/json_check.h"

namespace ptxbench {
namespace {

TEST(JsonCheck, ParseErrorNamesLineAndColumn) {
  auto r = parse_json("{\n  \"a\": 1,\n  \"b\": }", "task.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("task.json: invalid JSON at line 3, column"), std::string::npos) << r.err().message;
}

// Issue 27, new-user probe 9: a cut-off file says so.
TEST(JsonCheck, TextThatEndsEarlySaysTheFileIsTruncated) {
  auto r = parse_json("{\"format\": \"ptxbench.trajectory/1\", \"turns\": [{\"a\"", "t.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.err().message.rfind("t.json: invalid JSON at line 1, column ", 0), 0u) << r.err().message;
  EXPECT_NE(r.err().message.find(": the text ends early (a truncated file?): "), std::string::npos) << r.err().message;
  EXPECT_EQ(parse_json("{\"a\": }", "x").err().message.find("ends early"), std::string::npos) << "a bad value is not a cut";
}

TEST(JsonCheck, DumpPrettyKeepsFlatArraysOnOneLine) {
  auto j = ordered_json::parse(R"({"shape": [1, 2, 3], "nested": [{"a": 1}]})");
  EXPECT_EQ(dump_pretty(j), "{\n  \"shape\": [1,2,3],\n  \"nested\": [\n    {\n      \"a\": 1\n    }\n  ]\n}");
}

TEST(JsonCheck, GettersReportTypeAndMissing) {
  json_errors errs;
  auto j = ordered_json::parse(R"({"n": "x"})");
  EXPECT_FALSE(get_int(j, "n", "root", errs).has_value());
  EXPECT_FALSE(get_string(j, "m", "root", errs).has_value());
  ASSERT_EQ(errs.items().size(), 2u);
  EXPECT_EQ(errs.items()[0], "root.n: expected integer, got string");
  EXPECT_EQ(errs.items()[1], "root.m: missing required field");
}

}  // namespace
}  // namespace ptxbench
