#include "measure/launch_tally.h"

#include <gtest/gtest.h>

namespace ptxbench::measure {

TEST(LaunchTally, EqualCountsGiveThePerCallCount) {
  launch_tally t;
  for (int i = 0; i < 3; ++i) t.add(2);
  EXPECT_EQ(t.per_call(), 2);
  EXPECT_EQ(t.histogram().at(2), 3);
}

TEST(LaunchTally, VaryingCountsLeaveItUnknownAndShowInTheHistogram) {
  launch_tally t;
  t.add(1);
  t.add(1);
  t.add(0);
  EXPECT_FALSE(t.per_call().has_value());
  EXPECT_EQ(t.histogram().size(), 2u);
}

TEST(LaunchTally, AnUncountedCallOrNoLaunchesOrNoCallsLeaveItUnknown) {
  launch_tally uncounted;
  uncounted.add(1);
  uncounted.add_uncounted();
  EXPECT_FALSE(uncounted.per_call().has_value());
  launch_tally none;
  none.add(0);
  EXPECT_FALSE(none.per_call().has_value());
  EXPECT_FALSE(launch_tally{}.per_call().has_value());
}

}  // namespace ptxbench::measure
