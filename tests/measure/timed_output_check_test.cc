#include <gtest/gtest.h>

#include "measure/timed_output_check.h"

namespace ptxbench::measure {
namespace {

TEST(TimedOutputCheck, AllWithinToleranceIsOk) {
  EXPECT_EQ(judge_timed_output(1000, 0, 0), timed_output_judgement::ok);
}

TEST(TimedOutputCheck, AnyNanOrInfMeansNotComputed) {
  // Outputs are poisoned with NaN before every call: one left over means an element was not written.
  EXPECT_EQ(judge_timed_output(100'000'000, 1, 1), timed_output_judgement::not_computed);
}

TEST(TimedOutputCheck, AnIsolatedElementOnALargeOutputIsAnOutlier) {
  // The H200 case: 1 of 100,663,296 dQ elements 0.0156 off on one timed call (cuDNN 9.14 reference).
  EXPECT_EQ(judge_timed_output(100'663'296, 1, 0), timed_output_judgement::outliers);
  EXPECT_EQ(judge_timed_output(1'000'000, 1000, 0), timed_output_judgement::outliers);
}

TEST(TimedOutputCheck, MoreThanOnePerThousandMeansNotComputed) {
  EXPECT_EQ(judge_timed_output(1'000'000, 1001, 0), timed_output_judgement::not_computed);
  // Stale results from other inputs: nearly every element wrong.
  EXPECT_EQ(judge_timed_output(1'000'000, 999'000, 0), timed_output_judgement::not_computed);
}

TEST(TimedOutputCheck, SmallOutputsTolerateNoMismatch) {
  EXPECT_EQ(judge_timed_output(64, 1, 0), timed_output_judgement::not_computed);
  EXPECT_EQ(judge_timed_output(0, 1, 0), timed_output_judgement::not_computed);
}

}  // namespace
}  // namespace ptxbench::measure
