#include "agent/code_extract.h"

#include <gtest/gtest.h>

namespace ptxbench::agent {
namespace {

const std::string k_kernel = "#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view a, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_FLOAT32)\n";

std::string fenced(const std::string& tag, const std::string& body) { return "```" + tag + "\n" + body + "```\n"; }

TEST(CodeExtract, AcceptsEveryCudaTag) {
  for (const char* tag : {"cpp", "cuda", "cu", "c++", "CUDA", "cxx"}) {
    auto x = extract_kernel("Here it is:\n" + fenced(tag, k_kernel));
    ASSERT_TRUE(x.code) << tag << ": " << x.problem;
    EXPECT_EQ(x.code->code, k_kernel);
    EXPECT_TRUE(x.code->valid);
  }
}

TEST(CodeExtract, UntaggedBlockOnlyWhenItHoldsAKernel) {
  auto with = extract_kernel(fenced("", k_kernel));
  ASSERT_TRUE(with.code);
  EXPECT_EQ(with.code->fence_tag, "");
  auto without = extract_kernel(fenced("", "nvcc -O3 kernel.cu\n"));
  EXPECT_FALSE(without.code);
  EXPECT_NE(without.problem.find("none is tagged"), std::string::npos) << without.problem;
}

TEST(CodeExtract, LastValidBlockWinsOverLaterFragments) {
  std::string reply = fenced("cuda", "// draft\n__global__ void old() {}\n") + fenced("cuda", k_kernel) +
                      "And a helper you could use:\n" + fenced("cpp", "__device__ int helper();\n");
  auto x = extract_kernel(reply);
  ASSERT_TRUE(x.code);
  EXPECT_EQ(x.code->code, k_kernel);
  EXPECT_EQ(x.code->block_index, 1);
  EXPECT_EQ(x.code->blocks_found, 3);
}

TEST(CodeExtract, FallsBackToLastAcceptedBlockWhenNoneIsValid) {
  auto x = extract_kernel(fenced("cuda", "__global__ void a() {}\n") + fenced("cuda", "__global__ void b() {}\n"));
  ASSERT_TRUE(x.code);
  EXPECT_FALSE(x.code->valid);
  EXPECT_NE(x.code->code.find("b()"), std::string::npos);
}

TEST(CodeExtract, SaysClearlyWhenThereIsNoBlock) {
  auto x = extract_kernel("I would use wgmma with a 128x256 tile.");
  EXPECT_FALSE(x.code);
  EXPECT_EQ(x.problem, "the reply contains no fenced code block");
  auto py = extract_kernel(fenced("python", "import torch\n"));
  EXPECT_FALSE(py.code);
  EXPECT_NE(py.problem.find("python"), std::string::npos);
}

TEST(CodeExtract, IgnoresThinkingAndReportsTruncation) {
  std::string reply = "<think>maybe\n" + fenced("cuda", "__global__ void draft() {}\nPTXBENCH_EXPORT(x)\n") +
                      "</think>\nFinal:\n```cuda\n" + k_kernel;  // cut off before the closing fence
  auto x = extract_kernel(reply);
  ASSERT_TRUE(x.code);
  EXPECT_EQ(x.code->code, k_kernel);
  EXPECT_TRUE(x.code->unterminated);
  EXPECT_EQ(x.code->blocks_found, 1);
  EXPECT_FALSE(extract_kernel("<think>only thoughts</think>\n").code);
}

TEST(CodeExtract, TildeFencesAndLongerBacktickFences) {
  auto tilde = extract_kernel("~~~cuda\n" + k_kernel + "~~~\n");
  ASSERT_TRUE(tilde.code);
  EXPECT_TRUE(tilde.code->valid);
  // A ```` fence may hold ``` lines (e.g. a markdown example inside a comment).
  auto longer = extract_kernel("````cuda\n" + k_kernel + "// ```\n````\n");
  ASSERT_TRUE(longer.code);
  EXPECT_NE(longer.code->code.find("// ```"), std::string::npos);
}

TEST(CodeExtract, RefusesOversizedBlocks) {
  auto x = extract_kernel(fenced("cuda", k_kernel + std::string(2048, '/') + "\n"), 1024);
  EXPECT_FALSE(x.code);
  EXPECT_NE(x.problem.find("over the limit"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::agent
