#include <gtest/gtest.h>

#include "build/source_scan.h"

namespace ptxbench::build {
namespace {

std::vector<std::string> identifiers(const std::string& src) {
  std::vector<std::string> out;
  for (const auto& t : scan_source(src).identifiers) out.push_back(t.text);
  return out;
}

TEST(SourceScan, CommentsAndStringsAreNotCode) {
  auto ids = identifiers("// cudnnCreate\n/* cublasGemmEx */ int x = 1; const char* s = \"cublasLt\"; char c = 'c';");
  EXPECT_EQ(ids, (std::vector<std::string>{"int", "x", "const", "char", "s", "char", "c"}));
}

TEST(SourceScan, LineCommentContinuesAfterBackslash) {
  auto ids = identifiers("// comment \\\ncudnnHidden\nint y;");
  EXPECT_EQ(ids, (std::vector<std::string>{"int", "y"}));
}

TEST(SourceScan, RawStringsAreBlanked) {
  auto ids = identifiers("auto p = R\"x(cudnn \" still inside )\" cublas)x\"; int after;");
  EXPECT_EQ(ids, (std::vector<std::string>{"auto", "p", "int", "after"}));
}

TEST(SourceScan, EscapedQuotesDoNotEndStrings) {
  auto ids = identifiers("const char* s = \"a \\\" cublasX \"; int z;");
  EXPECT_EQ(ids, (std::vector<std::string>{"const", "char", "s", "int", "z"}));
}

TEST(SourceScan, DigitSeparatorIsNotACharLiteral) {
  auto ids = identifiers("int n = 1'000'000; int cublasAfter;");
  EXPECT_EQ(ids.back(), "cublasAfter");
}

TEST(SourceScan, IncludesAndLineNumbers) {
  auto s = scan_source("#include <cuda.h>\n  #  include \"cublas_v2.h\"\nint main() { return 0; }\n");
  ASSERT_EQ(s.includes.size(), 2u);
  EXPECT_EQ(s.includes[0].header, "cuda.h");
  EXPECT_EQ(s.includes[1].header, "cublas_v2.h");
  EXPECT_EQ(s.includes[1].line, 2);
  ASSERT_FALSE(s.identifiers.empty());
  EXPECT_EQ(s.identifiers.front().text, "int");
  EXPECT_EQ(s.identifiers.front().line, 3);
}

TEST(SourceScan, CallShapeIsRecorded) {
  auto s = scan_source("obj.system(1); ptr->fork(); system (\"x\");");
  ASSERT_EQ(s.identifiers.size(), 5u);
  EXPECT_EQ(s.identifiers[1].prev_char, '.');
  EXPECT_TRUE(s.identifiers[3].after_arrow);
  EXPECT_EQ(s.identifiers[4].text, "system");
  EXPECT_EQ(s.identifiers[4].next_char, '(');
}

TEST(SourceScan, UnterminatedCommentDoesNotCrash) {
  auto s = scan_source("int a; /* never closed cudnn");
  EXPECT_EQ(s.identifiers.size(), 2u);
}

}  // namespace
}  // namespace ptxbench::build
