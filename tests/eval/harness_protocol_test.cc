#include <gtest/gtest.h>

#include "eval/gpu_stage.h"
#include "eval/harness_protocol.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::eval {
namespace {

TEST(HarnessProtocol, JobRoundTrip) {
  auto s = load_suite(testing::repo_root() / "suite");
  ASSERT_TRUE(s.ok());
  const task* t = s->find_task("mha_bwd_d128_causal");
  harness_job job;
  job.task_name = t->name;
  job.def = t->def;
  job.wl = t->wl;
  job.baseline = t->baseline;
  job.baseline_options = t->baseline_options;
  job.tol = t->tol;
  job.correctness_trials = t->correctness_trials;
  job.candidates.push_back({"0", "/tmp/x.so", "run", {"GMMA", "TMA"}, true, false});
  job.runner = "/bin/ptxbench-runner";
  job.work_dir = "/tmp/w";
  job.seed = 42;
  job.options.iterations = 7;
  auto back = harness_job_from_json(ordered_json::parse(to_json(job).dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->def.name, "mha_bwd_d128_causal");
  EXPECT_EQ(back->wl.input("L").kind, input_kind::derived);
  EXPECT_EQ(back->baseline_options["causal"], true);
  EXPECT_EQ(back->correctness_trials, 1);
  EXPECT_EQ(back->options.iterations, 7);
  EXPECT_EQ(back->candidates.at(0).required_families.size(), 2u);
  EXPECT_EQ(back->seed, 42u);
}

TEST(HarnessProtocol, MalformedJobIsAnError) {
  EXPECT_FALSE(harness_job_from_json(ordered_json::parse("{}")).ok());
  auto j = ordered_json::parse(R"({"format": "ptxbench.harness-job/1", "task": {}})");
  auto r = harness_job_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.err().message.find("malformed harness job"), std::string::npos);
}

TEST(HarnessProtocol, OutcomeRoundTripKeepsStagesAndCounts) {
  candidate_outcome c;
  c.id = "3";
  c.status = eval_status::PASSED;
  c.outcome = "passed";
  c.stages.push_back({stage_id::timing, stage_outcome::passed, 1.5, "ok", {{"x", 1}}});
  c.dynamic_counts = family_counts{{"GMMA", 128}, {"TMA", 0}};
  c.dynamic_per_kernel["k"] = {{"GMMA", 128}};
  c.dynamic_method = "ncu";
  c.dynamic_ran = true;
  auto back = candidate_outcome_from_json(to_json(c));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->id, "3");
  EXPECT_EQ(back->stages.at(0).id, stage_id::timing);
  EXPECT_EQ(back->dynamic_counts->at("GMMA"), 128);
  EXPECT_TRUE(back->dynamic_ran);
}

verdict passed_with(std::optional<family_counts> stat, std::optional<family_counts> dyn, stage_outcome dyn_outcome) {
  verdict v;
  v.status = eval_status::PASSED;
  v.targets.required_families = {"GMMA", "TMA"};
  v.targets.static_counts = stat;
  v.targets.dynamic_counts = dyn;
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
  v.status = eval_status::INCORRECT_NUMERICAL;
  decide_target_verdict(v);
  EXPECT_EQ(v.targets.verdict, target_verdict::deferred);
  EXPECT_NE(v.targets.reason.find("only on correct kernels"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::eval
