#include <gtest/gtest.h>

#include "eval/target_verdict.h"

namespace ptxbench::eval {
namespace {

verdict passed_with(std::optional<family_counts> stat, std::optional<family_counts> dyn, stage_outcome dyn_outcome) {
  verdict v;
  v.decided.outcome = eval_outcome::passed;
  v.targets.required_families = {"GMMA", "TMA"};
  v.targets.static_counts = stat;
  v.targets.dynamic.counts = dyn;
  v.stages.push_back({stage_id::dynamic_check, dyn_outcome, 0, "profile text", nullptr});
  return v;
}

TEST(TargetVerdict, ExecutedNeedsAPositiveDynamicCount) {
  auto v = passed_with(family_counts{{"GMMA", 4}}, family_counts{{"GMMA", 128}, {"TMA", 0}}, stage_outcome::passed);
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::executed);
  EXPECT_TRUE(v.target_correct());
}

TEST(TargetVerdict, DeadCodeIsNotExecuted) {
  auto v = passed_with(family_counts{{"GMMA", 1}}, family_counts{{"GMMA", 0}, {"TMA", 0}}, stage_outcome::passed);
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::not_executed);
  EXPECT_FALSE(v.target_correct());
}

TEST(TargetVerdict, ProfileErrorNeverCounts) {
  auto v = passed_with(family_counts{{"GMMA", 1}}, std::nullopt, stage_outcome::error);
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::profile_error);
  EXPECT_FALSE(v.target_correct());
}

TEST(TargetVerdict, AbsentInSassWins) {
  auto v = passed_with(family_counts{{"GMMA", 0}, {"TMA", 0}}, std::nullopt, stage_outcome::skipped);
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::absent_in_sass);
}

TEST(TargetVerdict, IncorrectKernelsAreNotProfiled) {
  auto v = passed_with(family_counts{{"GMMA", 2}}, std::nullopt, stage_outcome::skipped);
  v.decided.outcome = eval_outcome::incorrect_numerical;
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::deferred);
  EXPECT_NE(v.targets.reason.find("only on correct kernels"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::eval
