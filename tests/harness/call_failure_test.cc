// How a failed runner call ends the evaluation, the sandbox's violations first: a runner the
// sandbox ended is a RUNTIME_ERROR whose message is exactly the sandbox's, whatever stage's call
// it was and whatever the death looked like from outside.
#include <signal.h>

#include <gtest/gtest.h>

#include "gpu/harness/call_failure.h"
#include "sandbox/violation_reporter.h"

namespace ptxbench::gpu {
namespace {

constexpr int exited(int code) { return code << 8; }  // a waitpid status for exit(code)

TEST(CallFailure, ARunnerThatExitedWithTheViolationCodeIsARuntimeErrorNamingTheCall) {
  std::string log = "candidate output\nptxbench-sandbox: attempted execve\n";
  auto r = crashed_call("exited with code 86", "trial 0 (seed 7)", log, exited(sandbox::violation_exit_code), true);
  EXPECT_EQ(r.outcome, call_outcome::crashed);
  EXPECT_EQ(r.message, "the candidate process exited with code 86 during trial 0 (seed 7)");
  EXPECT_EQ(r.sandbox_violation, "sandbox: attempted execve");
  auto f = classify_call_failure(r, "trial 0 (seed 7)");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "sandbox: attempted execve");
}

TEST(CallFailure, AViolationWhileLoadingTheCandidateIsNotALoadError) {
  // Static constructors run inside dlopen: the runner dies before "ready".
  auto r = crashed_call("exited with code 86", "loading the candidate", "ptxbench-sandbox: attempted fork\n",
                        exited(sandbox::violation_exit_code), true);
  auto f = classify_call_failure(r, "loading the candidate");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "sandbox: attempted fork");
}

TEST(CallFailure, UnderAToolTheLineDecidesNotTheExitStatus) {
  // compute-sanitizer or ncu is the harness's child; its own exit status is what waitpid sees.
  auto r = crashed_call("exited with code 1", "the call under memcheck",
                        "========= COMPUTE-SANITIZER\nptxbench-sandbox: attempted socket(AF_INET)\n========= ERROR SUMMARY\n",
                        exited(1), true);
  auto f = classify_call_failure(r, "the call under memcheck");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "sandbox: attempted socket(AF_INET)");
}

TEST(CallFailure, DeathBySigsysWithoutTheLineIsStillTheSandbox) {
  auto r = crashed_call("was killed by signal SIGSYS", "the call", "", SIGSYS, true);
  auto f = classify_call_failure(r, "the call");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "sandbox: blocked system call (the report was suppressed)");
}

TEST(CallFailure, AnOrdinaryCrashKeepsItsOwnMessage) {
  auto r = crashed_call("was killed by signal SIGSEGV", "trial 1 (seed 8)", "Segmentation fault\n", SIGSEGV, true);
  EXPECT_TRUE(r.sandbox_violation.empty());
  auto f = classify_call_failure(r, "trial 1 (seed 8)");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "the candidate process was killed by signal SIGSEGV during trial 1 (seed 8)");
}

TEST(CallFailure, TheMarkerInAFailedCallsMessageIsNotAViolation) {
  // The runner is alive and the entry point reported an error whose text imitates the sandbox:
  // only a dead runner's log counts, so this stays the candidate's own runtime error.
  call_result r;
  r.outcome = call_outcome::failed;
  r.error_kind = candidate_error::exception;
  r.message = "run threw: ptxbench-sandbox: attempted execve";
  auto f = classify_call_failure(r, "trial 0 (seed 1)");
  EXPECT_EQ(f.outcome, eval_outcome::runtime_error);
  EXPECT_EQ(f.message, "trial 0 (seed 1): run threw: ptxbench-sandbox: attempted execve");
}

TEST(CallFailure, TheOtherFailuresFollowTheirKind) {
  call_result r;
  r.outcome = call_outcome::timed_out;
  r.message = "no answer within 30 s";
  EXPECT_EQ(classify_call_failure(r, "x").outcome, eval_outcome::timeout);
  r = {};
  r.outcome = call_outcome::failed;
  r.load_error = true;
  r.message = "the candidate does not export ptxbench_entry_run";
  EXPECT_EQ(classify_call_failure(r, "x").outcome, eval_outcome::compile_error);
  r = {};
  r.outcome = call_outcome::failed;
  r.error_kind = candidate_error::dtype;
  EXPECT_EQ(classify_call_failure(r, "x").outcome, eval_outcome::incorrect_dtype);
  r.error_kind = candidate_error::shape;
  EXPECT_EQ(classify_call_failure(r, "x").outcome, eval_outcome::incorrect_shape);
  r.error_kind = candidate_error::argument_count;
  EXPECT_EQ(classify_call_failure(r, "x").outcome, eval_outcome::incorrect_shape);
}

}  // namespace
}  // namespace ptxbench::gpu
