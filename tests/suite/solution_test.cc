#include <gtest/gtest.h>

#include "suite/solution.h"

namespace ptxbench {
namespace {

ordered_json make_solution(const std::string& path, const std::string& entry = "kernel.cu::run") {
  ordered_json j = {{"name", "s"}, {"definition", "gemm"}, {"author", "test"},
                    {"spec", {{"language", "cuda"}, {"target_hardware", {"h200"}}, {"entry_point", entry},
                              {"dependencies", ordered_json::array()}, {"destination_passing_style", true}}},
                    {"sources", {{{"path", path}, {"content", "// kernel"}}}}};
  return j;
}

TEST(Solution, RoundTrip) {
  auto s = solution_from_json(make_solution("kernel.cu"));
  ASSERT_TRUE(s.ok()) << s.err().message;
  EXPECT_EQ(s->entry_file(), "kernel.cu");
  EXPECT_EQ(s->entry_symbol(), "run");
  auto again = solution_from_json(to_json(*s));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_json(*again), to_json(*s));
}

TEST(Solution, AbsolutePathIsRejected) {
  auto s = solution_from_json(make_solution("/etc/passwd", "/etc/passwd::run"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("solution.sources[0].path: unsafe path \"/etc/passwd\": absolute path"),
            std::string::npos);
}

TEST(Solution, DotDotPathIsRejected) {
  auto s = solution_from_json(make_solution("src/../../x.cu", "src/../../x.cu::run"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("'..' in path"), std::string::npos);
}

TEST(Solution, DuplicatePathsAreRejected) {
  auto j = make_solution("kernel.cu");
  j["sources"].push_back({{"path", "kernel.cu"}, {"content", "x"}});
  auto s = solution_from_json(j);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err().message, "solution.sources[1].path: duplicate path \"kernel.cu\"");
}

// The same rule as for a .cu file on disk: source content is text, so a NUL byte is refused.
TEST(Solution, NulByteInSourceContentIsRejected) {
  auto j = make_solution("kernel.cu");
  j["sources"][0]["content"] = std::string("__global__ void k() {}\0", 23);
  auto s = solution_from_json(j);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err().message, "solution.sources[0].content: binary content (NUL byte at offset 22), expected text");
}

TEST(Solution, MissingEntryFileIsRejected) {
  auto s = solution_from_json(make_solution("kernel.cu", "main.cu::run"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err().message, "solution.spec.entry_point: entry file \"main.cu\" is not among the sources");
}

TEST(Solution, EntryPointNeedsExactlyOneSeparator) {
  auto s = solution_from_json(make_solution("kernel.cu", "kernel.cu:run"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("expected \"file::symbol\""), std::string::npos);
}

TEST(Solution, UnsafePathReasons) {
  EXPECT_FALSE(unsafe_source_path_reason("a/b.cuh").has_value());
  EXPECT_TRUE(unsafe_source_path_reason("a//b").has_value());
  EXPECT_TRUE(unsafe_source_path_reason("./a").has_value());
  EXPECT_TRUE(unsafe_source_path_reason("a\\b").has_value());
  EXPECT_TRUE(unsafe_source_path_reason("").has_value());
}

}  // namespace
}  // namespace ptxbench
