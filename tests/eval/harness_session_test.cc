// The long-lived harness session (eval/harness_session.h) against a stand-in harness that speaks the
// protocol without a GPU (fake_harness/fake_harness.py): one setup for many candidates, verdicts
// completed (stages, decision, measurement record, target verdict), and a harness that dies, hangs, reports an infrastructure
// failure or cannot set up ends the session with an error instead of a verdict.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "eval/harness_session.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::eval {
namespace {

namespace fs = std::filesystem;

struct session_fixture {
  suite s;
  const task* t = nullptr;
  const target_info* target = nullptr;
  pipeline_config config;
  build::build_result built;

  session_fixture() {
    auto loaded = load_suite(testing::repo_root() / "suite");
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.err().message);
    s = std::move(*loaded);
    t = s.find_task("gemm_n7168_k5120");
    target = s.find_target("h200");
    config.cache_dir = fs::temp_directory_path() / ("ptxbench-session-test-" + std::to_string(::getpid()));
    config.gpu.harness = fs::path(PTXBENCH_SOURCE_ROOT) / "tests/eval/fake_harness/fake_harness.py";
    built.shared_object = "/nonexistent/candidate.so";
  }
  ~session_fixture() { fs::remove_all(config.cache_dir); }
};

result<verdict> run_one(harness_session& session, session_fixture& f, const std::string& symbol) {
  verdict v;
  v.mode = eval_mode::eval;
  v.targets.required_families = f.target->required_families;
  gpu_candidate c{&f.built, symbol, &v};
  if (auto st = session.evaluate(c); !st) return st.err();
  return v;
}

TEST(HarnessSession, OneSetupServesManyCandidatesAndCompletesTheirVerdicts) {
  session_fixture f;
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session) << session.err().message;
  EXPECT_EQ((*session)->environment()["gpu"], "FAKE H200");
  pid_t pid = (*session)->pid();
  for (const char* symbol : {"run", "wrong", "run"}) {
    auto v = run_one(**session, f, symbol);
    ASSERT_TRUE(v) << v.err().message;
    EXPECT_EQ(v->outcome(), std::string(symbol) == "run" ? eval_outcome::passed : eval_outcome::incorrect_numerical);
    EXPECT_EQ(v->environment["gpu"], "FAKE H200") << "the verdict records the harness's environment";
    EXPECT_TRUE(v->environment.contains("seed"));
    EXPECT_NE(v->targets.reason, "") << "the target verdict was decided";
  }
  EXPECT_EQ((*session)->pid(), pid) << "the same harness answered every candidate";
  EXPECT_EQ((*session)->candidates(), 3);
  EXPECT_TRUE((*session)->alive());
}

TEST(HarnessSession, OutlivesTheThreadThatStartedIt) {
  // An agent sweep's worker thread starts the shared harness on its first evaluation and may finish
  // its trajectories long before the others; the harness must stay up for them (an H100 run of
  // `sft recipe` lost it to the parent-death signal, which fires when the starting thread ends).
  session_fixture f;
  result<std::unique_ptr<harness_session>> session = make_error("not started");
  std::thread([&] { session = harness_session::start(*f.t, *f.target, f.config); }).join();
  ASSERT_TRUE(session) << session.err().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto v = run_one(**session, f, "run");
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->outcome(), eval_outcome::passed);
  EXPECT_TRUE((*session)->alive());
}

TEST(HarnessSession, AHarnessThatDiesEndsTheSessionWithAnErrorThatSaysHow) {
  session_fixture f;
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session) << session.err().message;
  auto v = run_one(**session, f, "die");
  ASSERT_FALSE(v);
  EXPECT_NE(v.err().message.find("exited with code 3"), std::string::npos) << v.err().message;
  EXPECT_NE(v.err().message.find("dying on purpose"), std::string::npos) << "the harness log's last line is quoted";
  EXPECT_FALSE((*session)->alive());
  EXPECT_FALSE(run_one(**session, f, "run")) << "a closed session evaluates nothing";
}

TEST(HarnessSession, AnInfrastructureFailureIsAnErrorNotAVerdict) {
  session_fixture f;
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session);
  auto v = run_one(**session, f, "infra");
  ASSERT_FALSE(v);
  EXPECT_NE(v.err().message.find("fake infra_error"), std::string::npos) << v.err().message;
  EXPECT_FALSE((*session)->alive());
}

TEST(HarnessSession, AHarnessThatHangsIsStoppedAtTheCandidateDeadline) {
  session_fixture f;
  auto session = harness_session::start(*f.t, *f.target, f.config, {.setup_timeout_s = 30, .candidate_timeout_s = 0.5});
  ASSERT_TRUE(session);
  pid_t pid = (*session)->pid();
  auto t0 = std::chrono::steady_clock::now();
  auto v = run_one(**session, f, "hang");
  ASSERT_FALSE(v);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_NE(v.err().message.find("did not answer within 0.5 s"), std::string::npos) << v.err().message;
  EXPECT_NE(::kill(pid, 0), 0) << "the hung harness was killed";
}

TEST(HarnessSession, ASetupFailureIsReportedAndLeavesNoProcess) {
  session_fixture f;
  task broken = *f.t;
  broken.name = "setup_fails";
  auto session = harness_session::start(broken, *f.target, f.config);
  ASSERT_FALSE(session);
  EXPECT_NE(session.err().message.find("no CUDA device (fake)"), std::string::npos) << session.err().message;
}

TEST(HarnessSession, TheVerdictRecordsHowTheMeasuringStagesHadTheGpu) {
  session_fixture f;
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session) << session.err().message;
  auto v = run_one(**session, f, "run");
  ASSERT_TRUE(v) << v.err().message;
  ASSERT_TRUE(v->measurement.has_value());
  EXPECT_TRUE(v->measurement->exclusive());
  EXPECT_EQ(v->measurement->device, "GPU-fake");
  EXPECT_DOUBLE_EQ(v->measurement->exclusive_waited_ms(), 1.5);
}

TEST(HarnessSession, ATritonCandidateWithoutTheTritonRuntimeIsAnErrorThatLeavesTheSessionOpen) {
  session_fixture f;
  f.config.root = testing::repo_root();  // the fake harness has no libptxbench_runner_py.so beside it
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session) << session.err().message;
  verdict v;
  v.mode = eval_mode::eval;
  v.targets.required_families = f.target->required_families;
  gpu_candidate c{&f.built, "run", &v, "triton"};
  auto st = (*session)->evaluate(c);
  ASSERT_FALSE(st);
  EXPECT_NE(st.err().message.find("cannot run Triton candidates"), std::string::npos) << st.err().message;
  EXPECT_NE(st.err().message.find("libptxbench_runner_py.so not found"), std::string::npos) << st.err().message;
  EXPECT_TRUE((*session)->alive());
  EXPECT_TRUE(run_one(**session, f, "run")) << "CUDA candidates still run";
}

TEST(HarnessSession, ATritonCandidateGoesThroughTheSameSessionAsACudaOne) {
  session_fixture f;
  // A harness folder with the Triton runner's helper library beside the (fake) harness.
  auto dir = f.config.cache_dir / "bin";
  fs::create_directories(dir);
  fs::copy_file(f.config.gpu.harness, dir / "fake_harness.py");
  { std::ofstream(dir / "libptxbench_runner_py.so") << "stand-in"; }
  f.config.gpu.harness = dir / "fake_harness.py";
  f.config.root = testing::repo_root();
  f.config.python = "/usr/bin/python3";
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_TRUE(session) << session.err().message;
  for (const char* language : {"triton", "cuda", "triton"}) {
    verdict v;
    v.mode = eval_mode::eval;
    v.targets.required_families = f.target->required_families;
    gpu_candidate c{&f.built, "run", &v, language};
    ASSERT_TRUE((*session)->evaluate(c));
    EXPECT_EQ(v.outcome(), eval_outcome::passed);
    EXPECT_NE(v.decided.message.find(std::string("(") + language + ")"), std::string::npos) << v.decided.message;
    if (std::string(language) == "triton") {
      const stage_record* sass = v.stage(stage_id::static_sass);
      ASSERT_NE(sass, nullptr) << "a Triton candidate's static SASS check runs after the GPU stages";
      EXPECT_EQ(sass->outcome, stage_outcome::deferred) << sass->summary;
    }
  }
  EXPECT_EQ((*session)->candidates(), 3);
}

TEST(HarnessSession, ClosingWaitsForTheHarnessToExitUnlessTheCallerSaysItNeedNot) {
  // The fake harness takes 2 s to exit after a "slow_exit" candidate, as a GPU context's teardown
  // takes its time. A long-lived caller waits for it; a one-shot command about to exit does not, and
  // the harness still ends by itself.
  for (bool await_exit : {true, false}) {
    session_fixture f;
    f.config.await_harness_exit = await_exit;
    auto session = harness_session::start(*f.t, *f.target, f.config);
    ASSERT_TRUE(session) << session.err().message;
    pid_t pid = (*session)->pid();
    auto v = run_one(**session, f, "slow_exit");
    ASSERT_TRUE(v) << v.err().message;
    auto t0 = std::chrono::steady_clock::now();
    session->reset();
    double closing_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (await_exit) {
      EXPECT_GE(closing_s, 1.5) << "the harness's exit was awaited";
      EXPECT_NE(::kill(pid, 0), 0) << "and it has been reaped";
    } else {
      EXPECT_LT(closing_s, 1.0) << "closing did not wait for the harness's exit";
      int st = 0;
      pid_t reaped = 0;
      for (int i = 0; i < 100 && reaped == 0; ++i) {
        reaped = ::waitpid(pid, &st, WNOHANG);
        if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      EXPECT_EQ(reaped, pid) << "the harness ended by itself within 10 s";
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "and exited normally, status " << st;
    }
  }
}

TEST(HarnessSession, AMissingHarnessIsAnError) {
  session_fixture f;
  f.config.gpu.harness = "/nonexistent/ptxbench-harness";
  auto session = harness_session::start(*f.t, *f.target, f.config);
  ASSERT_FALSE(session);
  EXPECT_NE(session.err().message.find("not found"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::eval
