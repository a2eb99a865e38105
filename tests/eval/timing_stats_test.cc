#include <gtest/gtest.h>

#include "eval/timing_stats.h"

namespace ptxbench::eval {
namespace {

TEST(TimingStats, QuantilesInterpolate) {
  std::vector<double> v = {4, 1, 3, 2, 5};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(TimingStats, SummaryHasSpreadAndCv) {
  auto s = summarize({1.0, 1.0, 1.0, 1.0});
  EXPECT_DOUBLE_EQ(s.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.cv, 0.0);
  auto t = summarize({1.0, 3.0});
  EXPECT_DOUBLE_EQ(t.mean_ms, 2.0);
  EXPECT_NEAR(t.cv, std::sqrt(2.0) / 2.0, 1e-12);
  EXPECT_EQ(t.samples, 2);
}

TEST(TimingStats, CalibrationUsesMedianAndJitter) {
  auto c = calibrate({0.10, 0.11, 0.12, 0.10, 0.50});
  EXPECT_DOUBLE_EQ(c.overhead_ms, 0.11);
  EXPECT_GT(c.allowance_ms, 0.1);  // the 0.5 outlier widens p90
  EXPECT_DOUBLE_EQ(calibrate({0.2, 0.2, 0.2}).allowance_ms, 0.1);
}

TEST(TimingStats, SpanIsUsedWhenTheWallClockAgrees) {
  wallclock_calibration cal{0.05, 0.1};
  auto d = decide_candidate_latency({{1.0, 2.0, 2.1}, {1.0, 2.0, 2.12}}, cal);
  EXPECT_EQ(d.disagreements, 0);
  EXPECT_DOUBLE_EQ(d.used_ms[0], 2.0);
  EXPECT_DOUBLE_EQ(d.ratios[0], 0.5);
}

TEST(TimingStats, ForgedOrIncompleteSpanLosesToTheWallClock) {
  // A runner that reports a tiny span (forged, or work on another process it hid) is bounded by
  // the harness's own clock.
  wallclock_calibration cal{0.05, 0.1};
  auto d = decide_candidate_latency({{1.0, 0.01, 2.05}}, cal);
  EXPECT_EQ(d.disagreements, 1);
  EXPECT_DOUBLE_EQ(d.used_ms[0], 2.0);
}

TEST(TimingStats, MissingSpanFallsBackToTheBound) {
  wallclock_calibration cal{0.05, 0.1};
  auto d = decide_candidate_latency({{1.0, 0.0, 1.05}}, cal);
  EXPECT_EQ(d.disagreements, 0);
  EXPECT_DOUBLE_EQ(d.used_ms[0], 1.0);
}

TEST(TimingStats, SpeedupIsTheMedianOfPerPairRatios) {
  wallclock_calibration cal{0, 0.1};
  // Drift moves both members of a pair; per-pair ratios stay at 0.5 although absolute times vary.
  auto d = decide_candidate_latency({{1.0, 2.0, 2.0}, {1.5, 3.0, 3.0}, {0.8, 1.6, 1.6}}, cal);
  for (double r : d.ratios) EXPECT_DOUBLE_EQ(r, 0.5);
  EXPECT_DOUBLE_EQ(quantile(d.ratios, 0.5), 0.5);
}

}  // namespace
}  // namespace ptxbench::eval
