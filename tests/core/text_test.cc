#include <gtest/gtest.h>

#include "core/text.h"

namespace ptxbench {
namespace {

TEST(Text, LowerLowersOnlyAsciiLetters) {
  EXPECT_EQ(lower("cuBLASLt_Matmul"), "cublaslt_matmul");
  EXPECT_EQ(lower("/PROC/Self/MAPS"), "/proc/self/maps");
  EXPECT_EQ(lower("Ä_9@[`{"), "Ä_9@[`{");  // UTF-8 bytes and the neighbours of A-Z are kept
  EXPECT_EQ(lower(""), "");
}

TEST(Text, StartsWith) {
  EXPECT_TRUE(starts_with("cudnnCreate", "cudnn"));
  EXPECT_TRUE(starts_with("x", ""));
  EXPECT_FALSE(starts_with("cud", "cudnn"));
}

}  // namespace
}  // namespace ptxbench
