// Stages that run at the same time (sanitize beside correctness, the dynamic check's runner started
// speculatively) are judged in their fixed order (gpu/harness/stage_order.h): the first part that
// decided decides, later parts leave only their lease holds.
#include <gtest/gtest.h>

#include "gpu/harness/stage_order.h"

namespace ptxbench::gpu {
namespace {

stage_part passed(stage_id id, const std::string& hold, const std::string& sandbox = "") {
  stage_part p;
  p.result.stages.push_back({id, stage_outcome::passed, 0.1, "ok", nullptr});
  p.result.measurement.holds.push_back({hold, false, 0, 10});
  if (!sandbox.empty()) p.result.sandbox[sandbox] = {{"applied", true}};
  return p;
}

stage_part failed(stage_id id, const std::string& hold, eval_outcome outcome, const std::string& message,
                  const std::string& sandbox = "") {
  stage_part p = passed(id, hold, sandbox);
  p.result.stages.back().outcome = stage_outcome::failed;
  p.result.decided = {outcome, id, message, "log"};
  p.go_on = false;
  return p;
}

std::vector<stage_part> parts(stage_part a, stage_part b) {
  std::vector<stage_part> v;
  v.push_back(std::move(a));
  v.push_back(std::move(b));
  return v;
}

TEST(StageOrder, BothPassedMergeInJudgedOrder) {
  gpu_stage_result out;
  auto c = passed(stage_id::correctness, "correctness", "plain");
  c.result.correctness = correctness_summary{};
  EXPECT_TRUE(judge_in_order(out, parts(passed(stage_id::sanitize, "sanitize", "sanitize-memcheck"), std::move(c))));
  ASSERT_EQ(out.stages.size(), 2u);
  EXPECT_EQ(out.stages[0].id, stage_id::sanitize);
  EXPECT_EQ(out.stages[1].id, stage_id::correctness);
  ASSERT_EQ(out.measurement.holds.size(), 2u);
  EXPECT_EQ(out.measurement.holds[0].stage, "sanitize");
  EXPECT_EQ(out.measurement.holds[1].stage, "correctness");
  EXPECT_TRUE(out.sandbox.contains("sanitize-memcheck"));
  EXPECT_TRUE(out.sandbox.contains("plain"));
  EXPECT_TRUE(out.correctness.has_value());
  EXPECT_FALSE(out.decided.stage.has_value());
}

TEST(StageOrder, SanitizeDecidesBeforeAFailedCorrectness) {
  // Both failed (they ran at the same time): sanitize's failure decides, as when it ran first, and
  // nothing of correctness reaches the verdict but its lease hold.
  gpu_stage_result out;
  auto c = failed(stage_id::correctness, "correctness", eval_outcome::incorrect_numerical, "wrong", "plain");
  c.result.correctness = correctness_summary{};
  EXPECT_FALSE(judge_in_order(
      out, parts(failed(stage_id::sanitize, "sanitize", eval_outcome::runtime_error, "memcheck: invalid read"),
                 std::move(c))));
  ASSERT_EQ(out.stages.size(), 1u);
  EXPECT_EQ(out.stages[0].id, stage_id::sanitize);
  EXPECT_EQ(out.decided.stage, stage_id::sanitize);
  EXPECT_EQ(out.decided.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(out.decided.message, "memcheck: invalid read");
  EXPECT_FALSE(out.correctness.has_value());
  EXPECT_FALSE(out.sandbox.contains("plain"));
  ASSERT_EQ(out.measurement.holds.size(), 2u);  // the GPU was held by both
  EXPECT_EQ(out.measurement.holds[1].stage, "correctness");
}

TEST(StageOrder, SanitizeDecidesBeforeAPassedCorrectness) {
  gpu_stage_result out;
  EXPECT_FALSE(judge_in_order(
      out, parts(failed(stage_id::sanitize, "sanitize", eval_outcome::timeout, "hang"),
                 passed(stage_id::correctness, "correctness", "plain"))));
  ASSERT_EQ(out.stages.size(), 1u);
  EXPECT_EQ(out.decided.stage, stage_id::sanitize);
  EXPECT_EQ(out.decided.outcome, eval_outcome::timeout);
}

TEST(StageOrder, CorrectnessDecidesAfterAPassedSanitize) {
  gpu_stage_result out;
  EXPECT_FALSE(judge_in_order(
      out, parts(passed(stage_id::sanitize, "sanitize"),
                 failed(stage_id::correctness, "correctness", eval_outcome::incorrect_numerical, "wrong", "plain"))));
  ASSERT_EQ(out.stages.size(), 2u);
  EXPECT_EQ(out.stages[1].outcome, stage_outcome::failed);
  EXPECT_EQ(out.decided.stage, stage_id::correctness);
  EXPECT_EQ(out.decided.outcome, eval_outcome::incorrect_numerical);
  EXPECT_TRUE(out.sandbox.contains("plain"));
}

TEST(StageOrder, AToolErrorGoesOn) {
  // compute-sanitizer that could not check the candidate: recorded as an error, not a decision.
  gpu_stage_result out;
  auto s = passed(stage_id::sanitize, "sanitize");
  s.result.stages.back().outcome = stage_outcome::error;
  EXPECT_TRUE(judge_in_order(out, parts(std::move(s), passed(stage_id::correctness, "correctness"))));
  ASSERT_EQ(out.stages.size(), 2u);
  EXPECT_EQ(out.stages[0].outcome, stage_outcome::error);
}

TEST(StageOrder, EarlierRecordsOfTheResultStayFirst) {
  // A Triton candidate's capture came before: its record and hold stay ahead of the parts'.
  gpu_stage_result out;
  out.stages.push_back({stage_id::link_gate, stage_outcome::passed, 0, "plan", nullptr});
  out.measurement.holds.push_back({"capture", false, 0, 5});
  EXPECT_TRUE(judge_in_order(out, parts(passed(stage_id::sanitize, "sanitize"), passed(stage_id::correctness, "correctness"))));
  ASSERT_EQ(out.stages.size(), 3u);
  EXPECT_EQ(out.stages[0].id, stage_id::link_gate);
  EXPECT_EQ(out.measurement.holds[0].stage, "capture");
}

}  // namespace
}  // namespace ptxbench::gpu
