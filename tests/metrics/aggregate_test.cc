// Aggregates on a small hand-made trajectory set; every expected value is counted by hand below.
#include <gtest/gtest.h>

#include "metrics/aggregate.h"

namespace ptxbench::metrics {
namespace {

turn_record turn(std::string traj, std::string variant, int t, eval_outcome label, std::optional<double> speedup = {},
                 std::string verdict = "") {
  turn_record r;
  r.model = "m";
  r.arch = "sm_90a";
  r.definition = "gemm";
  r.exp_dir = "run";
  r.trajectory = std::move(traj);
  r.variant = std::move(variant);
  r.turn = t;
  r.label = label;
  r.speedup = speedup;
  r.target_verdict = std::move(verdict);
  r.target_correct = r.correct() && r.target_verdict == "executed";
  return r;
}

// Variant A: a0, a1; variant B: b0. Counted turns: 3 + 3 + 3 = 9 (a1's infra error is not a turn).
std::vector<turn_record> hand_made() {
  using L = eval_outcome;
  return {
      turn("a0", "A", 0, L::compile_error),
      turn("a0", "A", 1, L::passed, 0.5, "executed"),
      turn("a0", "A", 2, L::passed, 1.2, "profile_error"),  // correct, but never target-correct
      turn("a1", "A", 0, L::passed, 0.8, "not_executed"),
      turn("a1", "A", 1, L::infra_error),
      turn("a1", "A", 1, L::incorrect_numerical),
      turn("a1", "A", 2, L::timeout),
      turn("b0", "B", 0, L::runtime_error),
      turn("b0", "B", 1, L::passed, 0.9, "executed"),
      turn("b0", "B", 2, L::passed, 1.1, "executed"),
  };
}

TEST(MetricsAggregate, TurnRatesCountFirstTTurnsAndSkipInfraErrors) {
  auto turns = hand_made();
  auto t1 = compute_turn_rates(turns, 1);  // a0 CE, a1 correct (not target), b0 RE
  EXPECT_EQ(t1.n_turns, 3);
  EXPECT_EQ(t1.correct_turns, 1);
  EXPECT_EQ(t1.target_correct_turns, 0);
  EXPECT_DOUBLE_EQ(*t1.rate, 1.0 / 3);
  EXPECT_DOUBLE_EQ(*t1.target_rate, 0.0);
  auto t2 = compute_turn_rates(turns, 2);  // + a0 correct/target, a1 numerical, b0 correct/target
  EXPECT_EQ(t2.n_turns, 6);
  EXPECT_EQ(t2.correct_turns, 3);
  EXPECT_EQ(t2.target_correct_turns, 2);
  auto t3 = compute_turn_rates(turns, 3);  // + a0 correct (profile_error), a1 timeout, b0 correct/target
  EXPECT_EQ(t3.n_turns, 9);
  EXPECT_EQ(t3.correct_turns, 5);
  EXPECT_EQ(t3.target_correct_turns, 3);
  EXPECT_DOUBLE_EQ(*t3.rate, 5.0 / 9);
  EXPECT_DOUBLE_EQ(*t3.target_rate, 3.0 / 9);
  auto none = compute_turn_rates(turns, 0);
  EXPECT_EQ(none.n_turns, 0);
  EXPECT_FALSE(none.rate.has_value());
}

TEST(MetricsAggregate, TrajectoryRatesNeedOneGoodTurnWithinT) {
  auto turns = hand_made();
  auto t1 = compute_trajectory_rates(turns, 1);
  EXPECT_EQ(t1.n_trajectories, 3);
  EXPECT_EQ(t1.correct_trajectories, 1);         // a1
  EXPECT_EQ(t1.target_correct_trajectories, 0);
  auto t2 = compute_trajectory_rates(turns, 2);
  EXPECT_EQ(t2.correct_trajectories, 3);         // a0, a1, b0
  EXPECT_EQ(t2.target_correct_trajectories, 2);  // a0, b0
  EXPECT_DOUBLE_EQ(*t2.target_rate, 2.0 / 3);
}

TEST(MetricsAggregate, BestSpeedupOverCorrectAndTargetCorrectTurns) {
  auto turns = hand_made();
  auto t1 = compute_best_speedups(turns, 1);
  EXPECT_DOUBLE_EQ(t1.best, 0.8);
  EXPECT_DOUBLE_EQ(t1.best_target, 0.0);  // no target-correct turn yet
  auto t2 = compute_best_speedups(turns, 2);
  EXPECT_DOUBLE_EQ(t2.best, 0.9);
  EXPECT_DOUBLE_EQ(t2.best_target, 0.9);
  auto t3 = compute_best_speedups(turns, 3);
  EXPECT_DOUBLE_EQ(t3.best, 1.2);         // a0 t2, correct but profile_error
  EXPECT_DOUBLE_EQ(t3.best_target, 1.1);  // b0 t2
}

TEST(MetricsAggregate, FastPIsMeanMinMaxOverVariants) {
  auto turns = hand_made();
  auto pts = compute_fast_p(turns, 3, {0.0, 1.0, 1.2});
  ASSERT_EQ(pts.size(), 3u);
  // p = 0: A (6 turns) has 3 fast (0.5, 1.2, 0.8), 1 also target; B (3 turns) has 2 fast, both target.
  EXPECT_EQ(pts[0].n_turns, 9);
  EXPECT_EQ(pts[0].n_variants, 2);
  EXPECT_DOUBLE_EQ(pts[0].fast, (3.0 / 6 + 2.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(pts[0].fast_min, 3.0 / 6);
  EXPECT_DOUBLE_EQ(pts[0].fast_max, 2.0 / 3);
  EXPECT_DOUBLE_EQ(pts[0].inst, (1.0 / 6 + 2.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(pts[0].inst_min, 1.0 / 6);
  // p = 1: A has 1.2 (not target), B has 1.1 (target).
  EXPECT_DOUBLE_EQ(pts[1].fast, (1.0 / 6 + 1.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(pts[1].inst, (0.0 + 1.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(pts[1].inst_min, 0.0);
  EXPECT_DOUBLE_EQ(pts[1].inst_max, 1.0 / 3);
  // p = 1.2: strictly greater, so 1.2 itself is not fast.
  EXPECT_DOUBLE_EQ(pts[2].fast, 0.0);
}

TEST(MetricsAggregate, FastPWithoutVariantKeyUsesWholeGroup) {
  auto turns = hand_made();
  for (auto& t : turns) t.variant.clear();
  auto pts = compute_fast_p(turns, 3, {0.0});
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].n_variants, 1);
  EXPECT_DOUBLE_EQ(pts[0].fast, 5.0 / 9);
  EXPECT_DOUBLE_EQ(pts[0].fast_min, pts[0].fast_max);
  EXPECT_TRUE(compute_fast_p(turns, 0, {0.0}).empty());
}

TEST(MetricsAggregate, GroupsKeepFirstAppearanceOrder) {
  auto a = hand_made();
  auto other = a[0];
  other.definition = "mha";
  std::vector<turn_record> mixed = {a[0], other, a[1], other};
  auto groups = group_turns(mixed);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].key.definition, "gemm");
  EXPECT_EQ(groups[0].turns.size(), 2u);
  EXPECT_EQ(groups[1].key.definition, "mha");
}

TEST(MetricsAggregate, PGridIsInclusiveAndClean) {
  auto g = p_grid(0, 1.5, 0.05);
  ASSERT_EQ(g.size(), 31u);
  EXPECT_EQ(g[3], 0.15);
  EXPECT_EQ(g.back(), 1.5);
  EXPECT_TRUE(p_grid(1, 0, 0.1).empty());
}

TEST(MetricsAggregate, ComputeMetricsMakesOneRowPerGroupAndLimit) {
  std::vector<turn_group> groups = group_turns(hand_made());
  metrics_options opt;
  opt.turn_limits = {1, 2, 3};
  opt.p_values = {0.0, 1.0};
  auto t = compute_metrics(groups, opt);
  EXPECT_EQ(t.turn_rates.size(), 3u);
  EXPECT_EQ(t.trajectory_rates.size(), 3u);
  EXPECT_EQ(t.best_speedups.size(), 3u);
  EXPECT_EQ(t.fast_p.size(), 6u);
  EXPECT_EQ(t.turn_rates[2].turn_limit, 3);
  EXPECT_EQ(t.turn_rates[2].value.correct_turns, 5);
}

}  // namespace
}  // namespace ptxbench::metrics
