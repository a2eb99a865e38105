#include "agent/feedback.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace ptxbench::agent {
namespace {

class FeedbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = load_suite(ptxbench::testing::repo_root() / "suite");
    ASSERT_TRUE(s) << s.err().message;
    m_suite = std::move(*s);
    m_task = m_suite->find_task("gemm_n7168_k5120");
    ASSERT_NE(m_task, nullptr);
  }

  static verdict base() {
    verdict v;
    v.task = "gemm_n7168_k5120";
    v.target = "h200";
    v.arch = "sm_90a";
    v.targets.required_families = {"GMMA", "TMA"};
    v.build.log = "ptxas info    : Used 168 registers, used 1 barriers, 213 bytes cmem[0]";
    return v;
  }

  std::optional<suite> m_suite;
  const task* m_task = nullptr;
};

TEST_F(FeedbackTest, PassedAndTargetCorrectKeepsUpstreamsStatusLineAndAddsCounts) {
  verdict v = base();
  v.decided.outcome = eval_outcome::passed;
  v.timing = timing_summary{};
  v.timing->speedup = 1.234;
  v.timing->candidate.median_ms = 0.1234;
  v.timing->reference.median_ms = 0.1523;
  v.targets.verdict = target_verdict::executed;
  v.targets.dynamic.counts = family_counts{{"GMMA", 4194304}, {"TMA", 65536}};
  v.targets.dynamic.method = "ncu";
  v.targets.static_counts = family_counts{{"GMMA", 96}, {"TMA", 8}};
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.label, eval_outcome::passed);
  EXPECT_TRUE(a.target_correct);
  EXPECT_TRUE(a.target_met);
  EXPECT_EQ(a.returncode, 0);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_EQ(text.rfind("Evaluation results:\n[M=8192] PASSED — speedup: 1.234x (kernel: 0.1234ms, ref: 0.1523ms)\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("ptxas info    : Used 168 registers"), std::string::npos);
  EXPECT_NE(text.find("Target instructions (h200, sm_90a; required: GMMA or TMA): executed on the workload"),
            std::string::npos) << text;
  EXPECT_NE(text.find("executed (thread instructions, ncu): GMMA 4194304, TMA 65536"), std::string::npos) << text;
  EXPECT_NE(text.find("\n\nTarget speedup 1.200x achieved! Min speedup: 1.234x."), std::string::npos);
}

TEST_F(FeedbackTest, FastButNotTargetCorrectDoesNotMeetTheTarget) {
  verdict v = base();
  v.decided.outcome = eval_outcome::passed;
  v.timing = timing_summary{};
  v.timing->speedup = 1.5;
  v.targets.verdict = target_verdict::absent_in_sass;
  v.targets.static_counts = family_counts{{"GMMA", 0}, {"TMA", 0}};
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.label, eval_outcome::passed);
  EXPECT_FALSE(a.target_correct);
  EXPECT_FALSE(a.target_met);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_NE(text.find("ABSENT from the compiled SASS"), std::string::npos);
  EXPECT_NE(text.find("were not verified as executed, so the target is not met. Keep optimizing."), std::string::npos);
}

TEST_F(FeedbackTest, NumericalErrorShowsMaxErrorsAndTheWorstElement) {
  verdict v = base();
  v.decided = {eval_outcome::incorrect_numerical, stage_id::correctness, "wrong values", ""};
  correctness_summary c;
  c.max_absolute_error = 0.5;
  c.max_relative_error = std::numeric_limits<double>::infinity();
  c.trials = 3;
  c.seeds = {7, 8, 9};
  c.failed_trial = 1;
  c.outputs.push_back({"C", 0.5, 2.0, 12, 0, {17, 4093}, 1.53, 1.03});
  v.correctness = c;
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.label, eval_outcome::incorrect_numerical);
  EXPECT_EQ(a.returncode, 1);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_EQ(text.rfind("Evaluation FAILED:\n[M=8192] INCORRECT_NUMERICAL\n  max_abs_error=0.5, max_rel_error=Inf\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("output C: 12 elements outside tolerance (0 non-finite); worst at [17, 4093]: got 1.53, expected 1.03"),
            std::string::npos) << text;
  EXPECT_NE(text.find("failing trial 2 of 3, seed 8"), std::string::npos);
  EXPECT_NE(text.find("\n\nPlease fix the issues and provide an updated kernel."), std::string::npos);
}

TEST_F(FeedbackTest, CompileErrorKeepsTheCompilerLogAndUpstreamsMarker) {
  verdict v = base();
  v.decided.outcome = eval_outcome::compile_error;
  v.decided.stage = stage_id::build;
  v.build.log = "kernel.cu(12): error: identifier \"foo\" is undefined";
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.label, eval_outcome::compile_error);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_NE(text.find("[M=8192] COMPILE_ERROR\nkernel.cu(12): error: identifier \"foo\" is undefined\nFailed to compile kernel"),
            std::string::npos) << text;
}

TEST_F(FeedbackTest, GateRejectionNamesTheLine) {
  verdict v = base();
  v.decided.outcome = eval_outcome::rejected;
  v.decided.stage = stage_id::source_gate;
  v.gate_findings.push_back({"vendor-library", "kernel.cu", 14, "cublasGemmEx(handle,", "cuBLAS is not allowed"});
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.event, turn_event::gate_rejected);
  EXPECT_EQ(a.label, eval_outcome::rejected);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_EQ(text.rfind("ERROR: Your kernel was rejected", 0), 0u);
  EXPECT_NE(text.find("kernel.cu:14: [vendor-library] cuBLAS is not allowed"), std::string::npos) << text;
}

TEST_F(FeedbackTest, CheckModeSaysTheGpuStagesDidNotRun) {
  verdict v = base();
  v.mode = eval_mode::check;
  v.decided.outcome = eval_outcome::built;
  v.stages.push_back({stage_id::correctness, stage_outcome::deferred, 0, "no GPU on this machine", nullptr});
  v.targets.static_counts = family_counts{{"GMMA", 96}, {"TMA", 8}};
  auto a = assess_verdict(v, 1.2);
  EXPECT_EQ(a.label, eval_outcome::built);
  EXPECT_EQ(a.returncode, 0);
  EXPECT_FALSE(a.target_met);
  std::string text = verdict_feedback(v, a, *m_task, 1.2);
  EXPECT_NE(text.find("the GPU stages did not run"), std::string::npos);
  EXPECT_NE(text.find("Not run here: correctness (no GPU on this machine)"), std::string::npos) << text;
  EXPECT_NE(text.find("in the SASS (instructions): GMMA 96, TMA 8"), std::string::npos) << text;
}

TEST(Feedback, ObservationWrapperAndNoCode) {
  EXPECT_EQ(observation_message(1, "text\n\n"), "<returncode>1</returncode>\n<output>\ntext</output>");
  EXPECT_EQ(no_code_feedback("the reply contains no fenced code block")
                .rfind("Could not extract a kernel from your response: the reply contains no fenced code block.", 0),
            0u);
  verdict v;
  v.decided.outcome = eval_outcome::infra_error;
  EXPECT_TRUE(is_infra_verdict(v));
  EXPECT_EQ(assess_verdict(v, 1.2).event, turn_event::infra_error);
}

}  // namespace
}  // namespace ptxbench::agent
