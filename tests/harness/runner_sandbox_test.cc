// What the verdict records about one runner's sandbox: the runner's report when it sent one, an
// explicit "unknown" with the reason when it did not — never a protection it did not report.
#include <gtest/gtest.h>

#include "gpu/harness/runner_sandbox.h"

namespace ptxbench::gpu {
namespace {

TEST(RunnerSandbox, TheRunnersReportIsRecordedAsSent) {
  call_result started;
  started.outcome = call_outcome::ok;
  started.sandbox = {{"applied", true},
                     {"seccomp", {{"active", true}, {"rules", 61}}},
                     {"landlock", {{"active", false}, {"reason", "Landlock is not enabled in this kernel"}}}};
  EXPECT_EQ(sandbox_record(started), started.sandbox);
}

TEST(RunnerSandbox, ALoadErrorCarriesTheReportOfTheSandboxItRanIn) {
  call_result started;
  started.outcome = call_outcome::failed;
  started.load_error = true;
  started.message = "cannot load the candidate: undefined symbol";
  started.sandbox = {{"applied", true}, {"mode", "enforce"}};
  EXPECT_EQ(sandbox_record(started)["applied"], true);
}

TEST(RunnerSandbox, ARunnerThatDiedBeforeReportingIsUnknownWithTheReason) {
  call_result started;
  started.outcome = call_outcome::crashed;
  started.sandbox_violation = "sandbox: attempted execve";
  auto j = sandbox_record(started);
  EXPECT_TRUE(j["applied"].is_null());
  EXPECT_EQ(j["reason"], "the runner ended before reporting its sandbox (sandbox: attempted execve)");

  started = {};
  started.outcome = call_outcome::timed_out;
  EXPECT_EQ(sandbox_record(started)["reason"], "the runner did not answer before reporting its sandbox");

  started = {};
  started.outcome = call_outcome::failed;
  started.message = "cannot load the candidate: bad ELF";
  EXPECT_EQ(sandbox_record(started)["reason"],
            "the runner failed before reporting its sandbox: cannot load the candidate: bad ELF");

  started = {};
  started.outcome = call_outcome::ok;  // a runner that answered "ready" without a report
  EXPECT_TRUE(sandbox_record(started)["applied"].is_null());
  EXPECT_EQ(sandbox_record(started)["reason"], "the runner sent no sandbox report");
}

TEST(RunnerSandbox, ADisabledSandboxIsRecordedAsOffNeverAsUnknown) {
  call_result started;
  started.outcome = call_outcome::ok;
  auto j = sandbox_record(started, false);
  EXPECT_EQ(j["applied"], false);
  EXPECT_EQ(j["reason"], "disabled for this evaluation (--no-sandbox)");
}

}  // namespace
}  // namespace ptxbench::gpu
