#include <gtest/gtest.h>
#include <algorithm>

#include "measure/timing_stats.h"

namespace ptxbench::measure {
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
  EXPECT_NEAR(d.used_ms[0], 2.0 - 0.1, 1e-12);  // the bound less the allowance
}

TEST(TimingStats, TheLatencyIsContinuousAcrossTheAllowance) {
  // Honest host work close to the allowance: one pair just inside, one just outside. Both are
  // charged within a few microseconds of each other — no jump from the span to the bound.
  wallclock_calibration cal{0.05, 0.02};
  auto d = decide_candidate_latency({{1.0, 0.80, 0.05 + 0.8199}, {1.0, 0.80, 0.05 + 0.8201}}, cal);
  EXPECT_EQ(d.disagreements, 1);
  EXPECT_NEAR(d.used_ms[0], 0.80, 1e-12);
  EXPECT_NEAR(d.used_ms[1], 0.8001, 1e-9);
  // Far beyond the allowance, all of the excess over it is charged.
  auto far = decide_candidate_latency({{1.0, 0.80, 0.05 + 1.80}}, cal);
  EXPECT_NEAR(far.used_ms[0], 1.78, 1e-12);
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


TEST(TimingStats, TheSharedMemoryChannelGetsASmallerAllowanceFloor) {
  // No-op calls through the shared-memory channel jitter by microseconds; the allowance follows
  // down to the channel's floor (50 us), not the socket's 0.1 ms.
  EXPECT_LT(k_shared_memory_min_allowance_ms, k_socket_min_allowance_ms);
  std::vector<double> noop(100, 0.050);
  for (int i = 0; i < 10; ++i) noop[i] = 0.052;
  auto c = calibrate(noop, k_shared_memory_min_allowance_ms);
  EXPECT_DOUBLE_EQ(c.overhead_ms, 0.050);
  EXPECT_DOUBLE_EQ(c.allowance_ms, k_shared_memory_min_allowance_ms);
  // Jitter beyond the floor widens it: p90 - median = 0.03 ms -> 0.09 ms.
  for (int i = 0; i < 20; ++i) noop[i] = 0.080;
  EXPECT_NEAR(calibrate(noop, k_shared_memory_min_allowance_ms).allowance_ms, 0.09, 1e-12);
}

TEST(TimingStats, AnHonestCallsHostWorkWithinTheFloorIsNotCharged) {
  // The H100 GEMM: every pair's bound ~30 us above its span. Within the floor, every pair is charged
  // its span, whatever the calibration's jitter came to — the speedup does not move with it.
  for (double jitter_allowance : {0.0, 0.01, 0.03}) {
    wallclock_calibration cal{0.45, std::max(k_shared_memory_min_allowance_ms, jitter_allowance)};
    auto d = decide_candidate_latency({{0.755, 0.844, 0.45 + 0.874}}, cal);
    EXPECT_EQ(d.disagreements, 0);
    EXPECT_DOUBLE_EQ(d.used_ms[0], 0.844);
  }
}

TEST(TimingStats, ADecoyHidingLessThanTheSocketAllowanceIsCaughtByTheSharedMemoryBound) {
  // A fast GEMM (0.75 ms) hidden from CUPTI behind a 0.6 ms decoy: the span says 0.6 ms, the truth
  // is 1.35 ms. With the socket calibration recorded on the H200 (overhead 1.424 ms, allowance
  // 0.875 ms; bench/results/h200/gemm_examples.json) the 0.75 ms it hides is inside the allowance
  // and the decoy wins; with the shared-memory channel (say 0.05 ms overhead, 0.02 ms allowance) the
  // bound replaces the span.
  timed_pair socket_pair{0.73, 0.60, 1.424 + 1.35};
  auto old = decide_candidate_latency({socket_pair}, wallclock_calibration{1.424, 0.875});
  EXPECT_EQ(old.disagreements, 0);
  EXPECT_DOUBLE_EQ(old.used_ms[0], 0.60);
  timed_pair shm_pair{0.73, 0.60, 0.05 + 1.35};
  auto now = decide_candidate_latency({shm_pair}, wallclock_calibration{0.05, 0.02});
  EXPECT_EQ(now.disagreements, 1);
  EXPECT_NEAR(now.used_ms[0], 1.35 - 0.02, 1e-12);
}

TEST(TimingStats, TheFloorCheckUsesTheSameTrustedBound) {
  auto cal = calibrate({0.05, 0.05, 0.05}, k_shared_memory_min_allowance_ms);
  // No span: the wall clock (less the no-op overhead) decides; the prepare interval is recorded only.
  EXPECT_FALSE(find_below_floor({{0.73, 0.0, 0.05 + 0.62, 0.30}}, cal, 0.5617).has_value());
  auto below = find_below_floor({{0.73, 0.0, 0.15, 0.30 + 0.62}}, cal, 0.5617);
  ASSERT_TRUE(below.has_value());
  EXPECT_FALSE(below->from_span);
  EXPECT_NEAR(below->bound_ms, 0.10, 1e-12);
}

}  // namespace
}  // namespace ptxbench::measure

namespace ptxbench::measure {
namespace {

TEST(AdaptiveTiming, TheMedianIntervalIsMadeOfOrderStatisticsAndIgnoresOutlierSizes) {
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(1.0 + 0.001 * (i - 50));  // 0.95 .. 1.049
  auto ci = median_confidence_interval(v);
  EXPECT_EQ(ci.n, 100);
  EXPECT_NEAR(ci.median, 0.9995, 1e-12);
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(50 + 9.8) + 1 = 61 (1-based).
  EXPECT_NEAR(ci.low, 1.0 + 0.001 * (39 - 50), 1e-12);
  EXPECT_NEAR(ci.high, 1.0 + 0.001 * (60 - 50), 1e-12);
  EXPECT_NEAR(ci.half_width, std::max(ci.median - ci.low, ci.high - ci.median) / ci.median, 1e-12);
  // One wild sample moves the interval by at most a rank, whatever its size.
  auto wild = v;
  wild[99] = 1000.0;
  auto ci2 = median_confidence_interval(wild);
  EXPECT_NEAR(ci2.high, ci.high, 1e-12);
  EXPECT_NEAR(ci2.median, ci.median, 1e-12);
}

TEST(AdaptiveTiming, SamplingStopsWhenTheIntervalIsNarrowEnoughOrTheCapIsReached) {
  stopping_rule rule;  // 20 pairs at least, ±0.25 %, 1.5 s
  std::vector<double> quiet(19, 0.887);
  EXPECT_FALSE(should_stop(rule, quiet, 0.1)) << "fewer than min_pairs";
  quiet.push_back(0.887);
  EXPECT_EQ(should_stop(rule, quiet, 0.1), stop_reason::converged);
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 0.85 : 0.92);
  EXPECT_FALSE(should_stop(rule, noisy, 0.5)) << "too wide, and time is left";
  EXPECT_EQ(should_stop(rule, noisy, 2.0), stop_reason::time_cap);
  rule.fixed_pairs = 50;
  EXPECT_FALSE(should_stop(rule, quiet, 99)) << "--iterations: exactly that many, whatever the interval or the clock";
  EXPECT_EQ(should_stop(rule, std::vector<double>(50, 1.0), 0), stop_reason::fixed);
  EXPECT_EQ(stop_reason_name(stop_reason::time_cap), "time_cap");
}

TEST(AdaptiveTiming, ANoisyEvaluationTakesMorePairsThanAQuietOne) {
  stopping_rule rule;
  auto pairs_until_stop = [&](double spread) {
    std::vector<double> r;
    uint64_t x = 88172645463325252ull;
    while (true) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      double u = static_cast<double>(x % 1000000) / 1000000.0 - 0.5;
      r.push_back(0.887 * (1 + spread * u));
      if (auto s = should_stop(rule, r, 0.0)) return std::make_pair(static_cast<int>(r.size()), *s);
    }
  };
  auto quiet = pairs_until_stop(0.004);
  auto noisy = pairs_until_stop(0.04);
  EXPECT_EQ(quiet.second, stop_reason::converged);
  EXPECT_EQ(noisy.second, stop_reason::converged);
  EXPECT_LT(quiet.first, noisy.first);
  EXPECT_EQ(quiet.first, 20);
}

}  // namespace
}  // namespace ptxbench::measure
