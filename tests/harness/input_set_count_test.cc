#include "gpu/harness/input_set_count.h"

#include <gtest/gtest.h>

namespace ptxbench::gpu {
namespace {

constexpr std::size_t MB = 1000 * 1000, GB = 1000 * MB;
constexpr std::size_t h100_flush = 100 * MB, h100_memory = 80 * GB;

TEST(InputSetCount, ALargeSetGetsEightWhereMemoryAllows) {
  // The GEMM (inputs, output, reference output: ~390 MB) and the attention forward (~1 GB).
  EXPECT_EQ(rotating_input_sets(390 * MB, h100_flush, h100_memory, 0), 8u);
  EXPECT_EQ(rotating_input_sets(1 * GB, h100_flush, h100_memory, 0), 8u);
}

TEST(InputSetCount, MemoryHoldsTheSetsToAnEighthOfTheGpuButNeverBelowThree) {
  // A backward attention task's 2.2 GB sets: 10 GB allow 4.
  EXPECT_EQ(rotating_input_sets(2200 * MB, h100_flush, h100_memory, 0), 4u);
  EXPECT_EQ(rotating_input_sets(20 * GB, h100_flush, h100_memory, 0), 3u);
}

TEST(InputSetCount, SmallSetsAreEnoughToExceedTwiceTheL2) {
  // 4 MB sets: 25 fill the flusher's 100 MB, one more so the set in use is never still cached.
  EXPECT_EQ(rotating_input_sets(4 * MB, h100_flush, h100_memory, 0), 26u);
}

TEST(InputSetCount, TheUsersCountIsTakenAsGiven) {
  EXPECT_EQ(rotating_input_sets(2200 * MB, h100_flush, h100_memory, 12), 12u);
  EXPECT_EQ(rotating_input_sets(4 * MB, h100_flush, h100_memory, 1), 1u);
}

TEST(InputSetCount, AnEmptySetDoesNotDivideByZero) {
  EXPECT_GE(rotating_input_sets(0, h100_flush, h100_memory, 0), k_min_input_sets);
}

}  // namespace
}  // namespace ptxbench::gpu
