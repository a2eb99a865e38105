#include <signal.h>

#include <gtest/gtest.h>

#include "core/process.h"

namespace ptxbench {
namespace {

TEST(Process, CapturesOutputAndExitCode) {
  auto r = run_process({.argv = {"sh", "-c", "echo out; echo err 1>&2; exit 3"}});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(describe_exit(r), "exited with code 3");
}

TEST(Process, TimeoutKillsTheWholeGroup) {
  auto r = run_process({.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"}, .timeout_s = 0.5});
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.wall_s, 10.0);
  EXPECT_EQ(describe_exit(r, 0.5), "timed out after 0.5 s");
}

TEST(Process, SignalIsDescribed) {
  auto r = run_process({.argv = {"sh", "-c", "kill -SEGV $$"}});
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(describe_exit(r).find("SIGSEGV"), std::string::npos);
}

TEST(Process, MissingProgramIsReportedNotThrown) {
  auto r = run_process({.argv = {"definitely-not-a-program-xyz"}});
  EXPECT_FALSE(r.started);
  EXPECT_NE(describe_exit(r).find("not found"), std::string::npos);
}

TEST(Process, OutputIsCapped) {
  auto r = run_process({.argv = {"sh", "-c", "head -c 100000 /dev/zero"}, .max_output_bytes = 1000});
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
}

TEST(Process, EnvironmentOverridesAndUnset) {
  auto r = run_process({.argv = {"sh", "-c", "echo ${PTXB_A}-${HOME:-none}"}, .env_overrides = {{"PTXB_A", "x"}},
                        .env_unset = {"HOME"}});
  EXPECT_EQ(r.out, "x-none\n");
}

}  // namespace
}  // namespace ptxbench
