// Finding ptxbench verdicts in what an agent's tools printed: `eval --json` output on its own, inside
// mini-swe-agent's <output> wrapper, inside an MCP tool result; never a verdict quoted inside a
// string, a torn one, or prose.
#include <gtest/gtest.h>

#include "harbor/verdict_scan.h"

namespace ptxbench::harbor {
namespace {

const std::string k_verdict = R"({
  "format": "ptxbench.verdict/1",
  "mode": "eval",
  "task": "gemm_n7168_k5120",
  "outcome": "passed",
  "message": "a } and a { in a string, and \"quotes\""
})";

TEST(VerdictScan, FindsAVerdictPrintedAloneOrInsideOtherText) {
  auto alone = find_verdicts(k_verdict);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0]["task"], "gemm_n7168_k5120");
  EXPECT_EQ(alone[0]["message"], "a } and a { in a string, and \"quotes\"");
  auto wrapped = find_verdicts("<returncode>0</returncode>\n<output>\n" + k_verdict + "\n</output>");
  ASSERT_EQ(wrapped.size(), 1u);
  // Compact, as `ptxbench mcp` serialises it, and as structuredContent inside a tool result.
  const std::string compact = ordered_json::parse(k_verdict).dump();
  EXPECT_EQ(find_verdicts("{\"content\":[],\"structuredContent\":" + compact + ",\"isError\":false}").size(), 1u);
  // Two evaluations in one output, in order.
  auto two = find_verdicts(k_verdict + "\n" + std::string(compact).replace(compact.find("passed"), 6, "timeout"));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1]["outcome"], "timeout");
}

TEST(VerdictScan, IgnoresWhatIsNotAVerdictObject) {
  const std::string compact = ordered_json::parse(k_verdict).dump();
  // Quoted inside another JSON string (escaped): not a verdict of this output.
  EXPECT_TRUE(find_verdicts(ordered_json({{"text", compact}}).dump()).empty());
  // Torn (the output was cut off), or prose that only names the format.
  EXPECT_TRUE(find_verdicts(k_verdict.substr(0, k_verdict.size() - 3)).empty());
  EXPECT_TRUE(find_verdicts("the verdict has \"format\": \"ptxbench.verdict/1\" and passed").empty());
  // "format" not the object's first key: not how ptxbench writes a verdict.
  EXPECT_TRUE(find_verdicts(R"({"task": "x", "format": "ptxbench.verdict/1"})").empty());
  // Hostile input: deep nesting, unbalanced braces, binary bytes, many markers.
  std::string hostile(100000, '{');
  for (int i = 0; i < 2000; ++i) hostile += "{\"format\": \"ptxbench.verdict/1\", \xff\xfe";
  EXPECT_TRUE(find_verdicts(hostile).empty());
}

TEST(VerdictScan, StopsAtTheLimit) {
  const std::string compact = ordered_json::parse(k_verdict).dump();
  std::string many;
  for (int i = 0; i < 50; ++i) many += compact + "\n";
  EXPECT_EQ(find_verdicts(many).size(), 50u);
  EXPECT_EQ(find_verdicts(many, 7).size(), 7u);
}

}  // namespace
}  // namespace ptxbench::harbor
