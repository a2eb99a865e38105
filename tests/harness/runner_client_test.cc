// runner_client (the harness's side of a runner) against a fake runner without CUDA
// (fake_runner.cc): go/done on the shared page and on the socket fallback, the confirmation hook
// inside the timed interval, the lead interval, a forged early "done", stale messages, and a runner
// that dies, fails or hangs during a call.
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu/harness/runner_client.h"
#include "test_support.h"

namespace ptxbench::gpu {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

class RunnerClient : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / ("ptxbench-rc-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(m_dir);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  call_result start(runner_client& c, const std::string& symbol, bool shared_memory = true,
                    const std::function<void(runner_launch&)>& adjust = {}) {
    runner_launch l;
    l.runner = PTXBENCH_FAKE_RUNNER;
    l.work_dir = m_dir;
    l.shared_object = m_dir / "candidate.so";
    l.symbol = symbol;
    l.sandbox = false;
    l.startup_timeout_s = 20;
    l.shared_memory_sync = shared_memory;
    if (adjust) adjust(l);
    auto r = c.start(l);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.err().message);
    return r.ok() ? *r : call_result{};
  }
  fs::path m_dir;
};

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

TEST_F(RunnerClient, TheSharedPageTimesTheCall) {
  runner_client c;
  ASSERT_EQ(start(c, "work_20ms").outcome, call_outcome::ok);
  EXPECT_EQ(c.channel(), "shared_memory");
  EXPECT_FALSE(c.audits());
  EXPECT_EQ(c.audit_unavailable(), "fake runner");
  for (int i = 0; i < 3; ++i) {
    auto r = c.call({}, 10);
    ASSERT_EQ(r.outcome, call_outcome::ok) << r.message;
    EXPECT_GE(r.wall_ms, 20.0);
    EXPECT_LT(r.wall_ms, 2000.0);
    EXPECT_NEAR(r.wall_ms, r.signal_ms, 0.05);  // no confirmation hook
    EXPECT_GT(r.lead_ms, 0.0);
    EXPECT_TRUE(r.audit.is_null());
  }
}

TEST_F(RunnerClient, BeforeSetupRunsAfterHelloAndBeforeTheRunnerIsSetUp) {
  // The Triton capture takes the GPU's lease here: after the runner's start-up, before its setup.
  runner_client c;
  int calls = 0;
  bool setup_seen_before = true;
  auto r = start(c, "work_1ms", true, [&](runner_launch& l) {
    l.before_setup = [&] {
      ++calls;
      setup_seen_before = fs::exists(c.scratch() / "setup-received");
    };
  });
  ASSERT_EQ(r.outcome, call_outcome::ok);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(setup_seen_before) << "the hook ran after the runner was set up";
  EXPECT_TRUE(fs::exists(c.scratch() / "setup-received"));
  EXPECT_EQ(c.call({}, 10).outcome, call_outcome::ok);
}

TEST_F(RunnerClient, AFailingBeforeSetupStopsTheStart) {
  runner_client c;
  runner_launch l;
  l.runner = PTXBENCH_FAKE_RUNNER;
  l.work_dir = m_dir;
  l.shared_object = m_dir / "candidate.so";
  l.symbol = "work_1ms";
  l.sandbox = false;
  l.startup_timeout_s = 20;
  l.before_setup = [] { throw std::runtime_error("the GPU stayed busy"); };
  EXPECT_THROW((void)c.start(l), std::runtime_error);
  EXPECT_FALSE(fs::exists(c.scratch() / "setup-received"));
  c.stop();
  EXPECT_FALSE(c.alive());
}

TEST_F(RunnerClient, TheConfirmationRunsAfterDoneAndInsideTheInterval) {
  runner_client c;
  ASSERT_EQ(start(c, "work_20ms").outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  double hook_at = -1;
  auto r = c.call({}, 10, false, [&] {
    hook_at = ms_since(t0);
    ::usleep(5000);  // e.g. the output snapshot waiting for the GPU
  });
  ASSERT_EQ(r.outcome, call_outcome::ok);
  EXPECT_GE(hook_at, 20.0);                     // after the work
  EXPECT_GE(r.wall_ms, r.signal_ms + 5.0);      // and counted in the wall clock
  EXPECT_GE(r.signal_ms, 20.0);
}

TEST_F(RunnerClient, AForgedEarlyDoneStopsTheSignalEarlyButTheCallStillEndsWithTheRunnersReport) {
  // The page alone cannot tell a forged "done" (the candidate shares the runner's memory): the
  // signal comes before the work ended. That is why the harness confirms the end itself in the
  // hook (stage_timing: a snapshot of the outputs on its own stream; docs/trusted-timing.md).
  runner_client c;
  ASSERT_EQ(start(c, "forge_40ms").outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  auto r = c.call({}, 10, false, [] {});
  double total = ms_since(t0);
  ASSERT_EQ(r.outcome, call_outcome::ok);
  EXPECT_LT(r.signal_ms, 30.0);
  EXPECT_GE(total, 40.0);  // the call returned only with the runner's own report
}

TEST_F(RunnerClient, TheSocketFallbackTimesTheCallToo) {
  runner_client c;
  ASSERT_EQ(start(c, "work_20ms", false).outcome, call_outcome::ok);
  EXPECT_EQ(c.channel(), "socket");
  auto r = c.call({}, 10, false, [] { ::usleep(2000); });
  ASSERT_EQ(r.outcome, call_outcome::ok) << r.message;
  EXPECT_GE(r.signal_ms, 20.0);
  EXPECT_GE(r.wall_ms, r.signal_ms + 2.0);
}

TEST_F(RunnerClient, ARunnerWithoutThePageFallsBackToTheSocket) {
  runner_client c;
  ASSERT_EQ(start(c, "no_page").outcome, call_outcome::ok);
  EXPECT_EQ(c.channel(), "socket");
  EXPECT_EQ(c.call({}, 10).outcome, call_outcome::ok);
}

TEST_F(RunnerClient, MessagesOfOtherCallsAreSkipped) {
  runner_client c;
  ASSERT_EQ(start(c, "stale").outcome, call_outcome::ok);
  for (int i = 0; i < 3; ++i) {
    auto r = c.call({}, 10);
    EXPECT_EQ(r.outcome, call_outcome::ok) << "call " << i << ": " << r.message;
  }
}

TEST_F(RunnerClient, ARunnerThatDiesDuringTheCallIsACrashNoticedBeforeTheTimeout) {
  runner_client c;
  ASSERT_EQ(start(c, "die").outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  auto r = c.call({}, 60);
  EXPECT_EQ(r.outcome, call_outcome::crashed);
  EXPECT_NE(r.message.find("exited with code 7"), std::string::npos) << r.message;
  EXPECT_LT(ms_since(t0), 10000.0);
}

TEST_F(RunnerClient, AnErrorReportedDuringTheCallIsAFailedCall) {
  runner_client c;
  ASSERT_EQ(start(c, "error").outcome, call_outcome::ok);
  auto r = c.call({}, 60);
  EXPECT_EQ(r.outcome, call_outcome::failed);
  EXPECT_NE(r.message.find("illegal memory access"), std::string::npos) << r.message;
}

TEST_F(RunnerClient, AHangingCallTimesOutAndTheRunnerIsKilled) {
  runner_client c;
  ASSERT_EQ(start(c, "work_5000ms").outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  auto r = c.call({}, 0.3);
  EXPECT_EQ(r.outcome, call_outcome::timed_out);
  EXPECT_LT(ms_since(t0), 4000.0);
  EXPECT_FALSE(c.alive());
}

// The Triton runner's warm-up (JIT compilation) happens in its first non-noop "prepare", whose
// deadline gets launch.first_prepare_extra_s on top of the call timeout; later calls do not.
TEST_F(RunnerClient, OnlyTheFirstPrepareGetsTheJitAllowance) {
  runner_client c;
  ASSERT_EQ(start(c, "warmup_1500ms", true, [](runner_launch& l) { l.first_prepare_extra_s = 10; }).outcome,
            call_outcome::ok);
  auto noop = c.call({}, 1.0, true);  // calibration calls come first and carry no warm-up
  ASSERT_EQ(noop.outcome, call_outcome::ok) << noop.message;
  auto first = c.call({}, 1.0);
  ASSERT_EQ(first.outcome, call_outcome::ok) << first.message;
  auto second = c.call({}, 1.0);
  ASSERT_EQ(second.outcome, call_outcome::ok) << second.message;
  c.stop();
}

TEST_F(RunnerClient, AWarmUpPastItsAllowanceTimesOutNamingTheWarmUp) {
  runner_client c;
  ASSERT_EQ(start(c, "warmup_3000ms", true, [](runner_launch& l) { l.first_prepare_extra_s = 0.5; }).outcome,
            call_outcome::ok);
  auto r = c.call({}, 0.5);
  EXPECT_EQ(r.outcome, call_outcome::timed_out);
  EXPECT_NE(r.message.find("the warm-up before the first call (JIT compilation)"), std::string::npos) << r.message;
}

TEST_F(RunnerClient, WithoutAnAllowanceTheFirstPrepareHasTheCallTimeout) {
  runner_client c;
  ASSERT_EQ(start(c, "warmup_3000ms").outcome, call_outcome::ok);  // a C++ runner: no allowance
  auto r = c.call({}, 0.5);
  EXPECT_EQ(r.outcome, call_outcome::timed_out);
  EXPECT_NE(r.message.find("preparing the call"), std::string::npos) << r.message;
}

// A runner that is a script starts through its interpreter (the Triton runner: python3 -I -B),
// with the same arguments and the same shared page.
TEST_F(RunnerClient, AnInterpreterStartsTheRunnerWithTheSameArgumentsAndPage) {
  runner_client c;
  ASSERT_EQ(start(c, "work_1ms", true, [](runner_launch& l) { l.interpreter = {"env", "PTXBENCH_VIA_ENV=1"}; }).outcome,
            call_outcome::ok);
  EXPECT_EQ(c.channel(), "shared_memory");
  auto r = c.call({}, 5.0);
  EXPECT_EQ(r.outcome, call_outcome::ok) << r.message;
}

// The harness forks a runner on its own thread and lets another thread await its start-up (sanitize
// beside correctness, the dynamic check's runner started speculatively): the runner must outlive
// that thread (PR_SET_PDEATHSIG fires when the forking thread ends, so the fork stays here).
TEST_F(RunnerClient, AStartAwaitedOnAnotherThreadOutlivesThatThread) {
  runner_client c;
  runner_launch l;
  l.runner = PTXBENCH_FAKE_RUNNER;
  l.work_dir = m_dir;
  l.shared_object = m_dir / "candidate.so";
  l.symbol = "work_1ms";
  l.sandbox = false;
  l.startup_timeout_s = 20;
  ASSERT_TRUE(c.spawn(l).ok());
  result<call_result> started = make_error("not run");
  std::thread([&] { started = c.finish_start(l); }).join();
  ASSERT_TRUE(started.ok()) << started.err().message;
  EXPECT_EQ(started->outcome, call_outcome::ok);
  ::usleep(100000);  // a child killed with its forking thread would be gone by now
  auto r = c.call({}, 5.0);
  EXPECT_EQ(r.outcome, call_outcome::ok) << r.message;
}

// abort() from another thread ends a call in progress at once (sanitize's failure stops the
// correctness runner it ran beside).
TEST_F(RunnerClient, AbortFromAnotherThreadEndsACallAtOnce) {
  runner_client c;
  ASSERT_EQ(start(c, "work_20000ms").outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  std::thread stopper([&] {
    ::usleep(200000);
    c.abort();
  });
  auto r = c.call({}, 30.0);
  stopper.join();
  EXPECT_EQ(r.outcome, call_outcome::crashed) << r.message;
  EXPECT_LT(ms_since(t0), 5000);
  c.stop(1);
  c.abort();  // after the runner was reaped: a no-op
}

// ... and a start-up still waiting for the runner to connect (a wrapper that never starts it).
TEST_F(RunnerClient, AbortEndsAStartThatIsStillWaitingForTheRunner) {
  runner_client c;
  runner_launch l;
  l.runner = PTXBENCH_FAKE_RUNNER;
  l.wrapper = {"sh", "-c", "sleep 30"};  // the runner's arguments become the script's $0, $1...
  l.work_dir = m_dir;
  l.shared_object = m_dir / "candidate.so";
  l.symbol = "work_1ms";
  l.sandbox = false;
  l.startup_timeout_s = 20;
  ASSERT_TRUE(c.spawn(l).ok());
  auto t0 = clock_type::now();
  std::thread stopper([&] {
    ::usleep(200000);
    c.abort();
  });
  auto started = c.finish_start(l);
  stopper.join();
  ASSERT_TRUE(started.ok()) << started.err().message;
  EXPECT_NE(started->outcome, call_outcome::ok);
  EXPECT_LT(ms_since(t0), 5000);
}

// The dynamic check's runner under Nsight Compute: ncu writes its report after the runner exited.
// release() returns as soon as the runner itself has ended — the timing stage may start then — while
// the tool still works; stop(), on another thread, then waits for the tool and says how it ended. A
// fake tool: runs the runner as its child, then takes `after` seconds and writes its "report".
class RunnerUnderATool : public RunnerClient {
 protected:
  call_result start_under_tool(runner_client& c, const std::string& symbol, double after, int exit_code = 0) {
    m_report = m_dir / "report";
    return start(c, symbol, true, [&](runner_launch& l) {
      l.wrapper = {"sh", "-c",
                   fmt::format("\"$@\"; sleep {}; echo written > '{}'; exit {}", after, m_report.string(), exit_code),
                   "fake-ncu"};
    });
  }
  fs::path m_report;
};

TEST_F(RunnerUnderATool, ReleaseReturnsOnceTheRunnerEndedWhileTheToolStillWritesItsReport) {
  runner_client c;
  ASSERT_EQ(start_under_tool(c, "work_1ms", 1.0).outcome, call_outcome::ok);
  ASSERT_EQ(c.call({}, 5.0).outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  ASSERT_TRUE(c.release(10));
  EXPECT_LT(ms_since(t0), 800);          // not the tool's second
  EXPECT_FALSE(fs::exists(m_report));    // the tool is still at work
  std::string how;
  std::thread([&] { how = c.stop(10); }).join();  // waiting only: the tool was forked on this thread
  EXPECT_GE(ms_since(t0), 900);
  EXPECT_TRUE(fs::exists(m_report));
  EXPECT_EQ(how, "exited with code 0");
}

TEST_F(RunnerUnderATool, ReleaseWaitsForTheRunnersOwnTeardown) {
  runner_client c;
  ASSERT_EQ(start_under_tool(c, "linger_400ms", 0).outcome, call_outcome::ok);
  ASSERT_EQ(c.call({}, 5.0).outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  ASSERT_TRUE(c.release(10));
  EXPECT_GE(ms_since(t0), 380);  // the runner's exit, however slow, comes before release() returns
  EXPECT_EQ(c.stop(10), "exited with code 0");
}

TEST_F(RunnerUnderATool, AToolThatFailsAfterItsRunnerEndedIsReportedByStop) {
  runner_client c;
  ASSERT_EQ(start_under_tool(c, "work_1ms", 0.2, 3).outcome, call_outcome::ok);
  ASSERT_EQ(c.call({}, 5.0).outcome, call_outcome::ok);
  ASSERT_TRUE(c.release(10));
  std::string how;
  std::thread([&] { how = c.stop(10); }).join();
  EXPECT_EQ(how, "exited with code 3");
}

TEST_F(RunnerUnderATool, ARunnerThatDoesNotExitInTheGraceIsKilledWithItsTool) {
  runner_client c;
  ASSERT_EQ(start_under_tool(c, "linger_20000ms", 0).outcome, call_outcome::ok);
  ASSERT_EQ(c.call({}, 5.0).outcome, call_outcome::ok);
  auto t0 = clock_type::now();
  EXPECT_FALSE(c.release(0.3));
  EXPECT_LT(ms_since(t0), 2000);
  EXPECT_EQ(c.stop(10), "was killed by signal SIGKILL (Killed)");
  EXPECT_LT(ms_since(t0), 4000);
}

TEST_F(RunnerClient, ReleaseFollowsARunnerWithoutATool) {
  runner_client c;
  ASSERT_EQ(start(c, "work_1ms").outcome, call_outcome::ok);
  ASSERT_TRUE(c.release(10));
  EXPECT_EQ(c.stop(10), "exited with code 0");
  EXPECT_FALSE(c.release(10));  // nothing left to follow
}

TEST(CandidateErrorKind, TheRunnerNamesMapToKindsAndAnythingElseIsUnspecified) {
  EXPECT_EQ(parse_candidate_error("compile"), candidate_error::compile);
  EXPECT_EQ(parse_candidate_error("exception"), candidate_error::exception);
  // The Triton capture's refusal: the plan stage rejects it at the link gate.
  EXPECT_EQ(parse_candidate_error("unreplayable"), candidate_error::unreplayable);
  EXPECT_EQ(parse_candidate_error("Unreplayable"), candidate_error::unspecified);
  EXPECT_EQ(parse_candidate_error(""), candidate_error::unspecified);
}

}  // namespace
}  // namespace ptxbench::gpu
