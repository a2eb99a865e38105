#include <gtest/gtest.h>

#include "suite/task.h"
#include "test_support.h"
#include "verdict/harness_protocol.h"
#include "verdict/verdict_json.h"

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
  job.options.timing_channel = "socket";
  job.options.tamper_check = false;
  auto back = harness_job_from_json(ordered_json::parse(to_json(job).dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->def.name, "mha_bwd_d128_causal");
  EXPECT_EQ(back->wl.input("L").kind, input_kind::derived);
  EXPECT_EQ(back->baseline_options["causal"], true);
  EXPECT_EQ(back->correctness_trials, 1);
  EXPECT_EQ(back->options.iterations, 7);
  EXPECT_EQ(back->options.timing_channel, "socket");
  EXPECT_FALSE(back->options.tamper_check);
  // A job written before these options existed gets the defaults (shared memory, tamper check on).
  auto old = to_json(job);
  old["options"].erase("timing_channel");
  old["options"].erase("tamper_check");
  auto defaulted = harness_job_from_json(old);
  ASSERT_TRUE(defaulted.ok());
  EXPECT_EQ(defaulted->options.timing_channel, "shared_memory");
  EXPECT_TRUE(defaulted->options.tamper_check);
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

// A runner's sandbox report as the runner sends it (sandbox_report's to_json, abridged).
ordered_json plain_report() {
  return ordered_json::parse(R"({"applied": true, "mode": "enforce", "tool": "none",
    "seccomp": {"active": true, "rules": 61},
    "landlock": {"active": false, "reason": "Landlock is not enabled in this kernel", "abi": 0},
    "network_namespace": {"active": true, "detail": "calling thread and its children"}})");
}

TEST(HarnessProtocol, ResultRoundTripKeepsTheSandboxOfEveryProcess) {
  gpu_stage_result c;
  c.decided = {eval_outcome::runtime_error, stage_id::correctness, "sandbox: attempted execve", ""};
  c.sandbox["plain"] = plain_report();
  c.sandbox["sanitize-memcheck"] = {{"applied", nullptr}, {"reason", "the runner ended before reporting its sandbox"}};
  auto back = gpu_stage_result_from_json(ordered_json::parse(to_json(c).dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->sandbox, c.sandbox);
  EXPECT_EQ(back->sandbox["plain"]["landlock"]["reason"], "Landlock is not enabled in this kernel");
}

TEST(HarnessProtocol, ResultWithoutSandboxStillReadsAndAMalformedOneIsRefused) {
  gpu_stage_result c;
  auto j = to_json(c);
  j.erase("sandbox");  // a harness result written before the sandbox existed
  auto back = gpu_stage_result_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_TRUE(back->sandbox.is_object());
  EXPECT_TRUE(back->sandbox.empty());
  j["sandbox"] = "on";
  auto bad = gpu_stage_result_from_json(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.err().message.find("sandbox must be an object"), std::string::npos);
}

TEST(HarnessProtocol, MergePutsTheSandboxReportsIntoTheVerdictEnvironment) {
  verdict v;
  v.environment = {{"gpu", "NVIDIA H200"}};
  gpu_stage_result r;
  r.decided = {eval_outcome::passed, std::nullopt, "correct", ""};
  r.sandbox["plain"] = plain_report();
  r.sandbox["profile"] = plain_report();
  r.sandbox["profile"]["tool"] = "nsight-compute";
  merge_into(r, v);
  EXPECT_EQ(v.environment["gpu"], "NVIDIA H200");  // the harness's environment stays
  ASSERT_TRUE(v.environment["sandbox"].is_object());
  EXPECT_EQ(v.environment["sandbox"]["plain"]["seccomp"]["active"], true);
  EXPECT_EQ(v.environment["sandbox"]["profile"]["tool"], "nsight-compute");
  // ...and the verdict's JSON (ptxbench eval --json) carries it and reads it back.
  auto j = to_json(v);
  EXPECT_EQ(j["environment"]["sandbox"]["plain"]["landlock"]["active"], false);
  auto back = verdict_from_json(ordered_json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->environment["sandbox"], v.environment["sandbox"]);
}

TEST(HarnessProtocol, MergeWithoutSandboxReportsLeavesTheEnvironmentAlone) {
  verdict v;
  gpu_stage_result r;
  r.decided = {eval_outcome::infra_error, std::nullopt, "the harness failed", ""};
  merge_into(r, v);
  EXPECT_FALSE(v.environment.is_object() && v.environment.contains("sandbox"));
}

}  // namespace
}  // namespace ptxbench
