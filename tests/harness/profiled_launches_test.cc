// The dynamic check's profiled call stands for the candidate's calls only when it, the correctness
// calls and the timed calls launched the same number of kernels (gpu/harness/profiled_launches.h).
#include <gtest/gtest.h>

#include "gpu/harness/profiled_launches.h"

namespace ptxbench::gpu {
namespace {

TEST(ProfiledLaunches, OneCallsWorthAsEveryCallMadeItStands) {
  EXPECT_EQ(profiled_launch_mismatch(2, 2, 2), "");
}

TEST(ProfiledLaunches, CorrectnessCallsThatVariedCompareNothing) {
  // Every launch of the profiled calls was counted: there is no one call's worth to hold it to.
  EXPECT_EQ(profiled_launch_mismatch(-1, 7, 3), "");
  EXPECT_EQ(profiled_launch_mismatch(-1, 7, -1), "");
}

TEST(ProfiledLaunches, AProfiledCallThatLaunchedOtherwiseIsNamed) {
  EXPECT_EQ(profiled_launch_mismatch(1, 2, 1),
            "the profiled call launched 2 kernel(s), each correctness call 1: the candidate's calls do not do the "
            "same work");
}

TEST(ProfiledLaunches, TimedCallsThatLaunchedOtherwiseAreNamed) {
  EXPECT_EQ(profiled_launch_mismatch(1, 1, 2),
            "each timed call launched 2 kernel(s), each profiled and correctness call 1: the candidate's calls do not "
            "do the same work");
  EXPECT_EQ(profiled_launch_mismatch(1, 1, -1),
            "the timed calls launched varying numbers of kernels, each profiled and correctness call 1: the "
            "candidate's calls do not do the same work");
}

}  // namespace
}  // namespace ptxbench::gpu
