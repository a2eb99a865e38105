#include <gtest/gtest.h>

#include "build/compiler_log.h"
#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::build {
namespace {

TEST(CompilerLog, ParsesResourcesPerKernel) {
  auto text = read_file(testing::fixtures_dir() / "build" / "ptxas_two_kernels.txt", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto log = parse_compiler_log(*text);
  ASSERT_EQ(log.kernels.size(), 2u);
  EXPECT_EQ(log.kernels[0].kernel, "_Z10naive_gemmPK13__nv_bfloat16S1_PS_iii");
  EXPECT_EQ(log.kernels[0].arch, "sm_90a");
  EXPECT_EQ(log.kernels[0].registers, 32);
  EXPECT_EQ(log.kernels[1].kernel, "_Z4tilePf");
  EXPECT_EQ(log.kernels[1].registers, 12);
  EXPECT_EQ(log.kernels[1].barriers, 1);
  EXPECT_EQ(log.kernels[1].smem_bytes, 4096);
  EXPECT_TRUE(log.errors.empty());
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("warning #550-D"), std::string::npos);
  EXPECT_EQ(log.text, *text);
}

TEST(CompilerLog, StackFrameAndSpills) {
  auto text = read_file(testing::fixtures_dir() / "build" / "ptxas_stack_frame.txt", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto log = parse_compiler_log(*text);
  ASSERT_EQ(log.kernels.size(), 1u);
  EXPECT_EQ(log.kernels[0].stack_frame_bytes, 2048);
  EXPECT_EQ(log.kernels[0].registers, 32);
  auto spills = parse_compiler_log(
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 24 bytes spill stores, 28 bytes spill loads\n");
  ASSERT_EQ(spills.kernels.size(), 1u);
  EXPECT_EQ(spills.kernels[0].spill_store_bytes, 24);
  EXPECT_EQ(spills.kernels[0].spill_load_bytes, 28);
}

TEST(CompilerLog, ErrorsAreCollected) {
  auto log = parse_compiler_log("kernel.cu(4): error: identifier \"x\" is undefined\n1 error detected\n");
  ASSERT_EQ(log.errors.size(), 1u);
  EXPECT_EQ(log.errors[0], "kernel.cu(4): error: identifier \"x\" is undefined");
}

}  // namespace
}  // namespace ptxbench::build
