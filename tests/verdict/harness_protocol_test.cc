#include <gtest/gtest.h>

#include "suite/task.h"
#include "test_support.h"
#include "verdict/harness_protocol.h"

namespace ptxbench {
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

TEST(HarnessProtocol, ResultRoundTripKeepsDecisionStagesAndCounts) {
  gpu_stage_result c;
  c.id = "3";
  c.decided = {eval_outcome::incorrect_dtype, stage_id::correctness, "argument 0 is float32", "log text"};
  c.stages.push_back({stage_id::timing, stage_outcome::passed, 1.5, "ok", {{"x", 1}}});
  c.dynamic.counts = family_counts{{"GMMA", 128}, {"TMA", 0}};
  c.dynamic.per_kernel["k"] = {{"GMMA", 128}};
  c.dynamic.method = "ncu";
  c.dynamic.ran = true;
  auto back = gpu_stage_result_from_json(to_json(c));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->id, "3");
  EXPECT_EQ(back->decided.outcome, eval_outcome::incorrect_dtype);
  EXPECT_EQ(back->decided.stage, stage_id::correctness);
  EXPECT_EQ(back->decided.log, "log text");
  EXPECT_EQ(back->stages.at(0).id, stage_id::timing);
  EXPECT_EQ(back->dynamic.counts->at("GMMA"), 128);
  EXPECT_TRUE(back->dynamic.ran);
}

TEST(HarnessProtocol, ResultWithAnUnknownOutcomeIsRefused) {
  gpu_stage_result c;
  auto j = to_json(c);
  j["outcome"] = "fine";
  auto back = gpu_stage_result_from_json(j);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.err().message.find("unknown outcome 'fine'"), std::string::npos);
}

TEST(HarnessProtocol, MergeAppendsTheGpuStagesAndTakesTheDecision) {
  verdict v;
  v.stages.push_back({stage_id::build, stage_outcome::passed, 1, "built", nullptr});
  gpu_stage_result r;
  r.decided = {eval_outcome::passed, std::nullopt, "correct", ""};
  r.stages.push_back({stage_id::correctness, stage_outcome::passed, 2, "ok", nullptr});
  r.timing = timing_summary{};
  r.timing->speedup = 0.9;
  r.dynamic.counts = family_counts{{"GMMA", 1}};
  merge_into(r, v);
  EXPECT_TRUE(v.passed());
  EXPECT_EQ(v.status(), eval_status::PASSED);
  ASSERT_EQ(v.stages.size(), 2u);
  EXPECT_EQ(v.stages[1].id, stage_id::correctness);
  EXPECT_DOUBLE_EQ(v.timing->speedup, 0.9);
  EXPECT_EQ(v.targets.dynamic.counts->at("GMMA"), 1);
}

}  // namespace
}  // namespace ptxbench
