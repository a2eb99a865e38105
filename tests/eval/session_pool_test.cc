// The harness sessions every GPU client shares (eval/session_pool.h), against the stand-in harness
// (fake_harness/fake_harness.py): one harness per task and protocol, reused across calls; a failed
// harness replaced on the next call; the least recently used closed beyond the limit.
#include <gtest/gtest.h>

#include <signal.h>

#include "eval/session_pool.h"
#include "suite/task.h"
#include "test_support.h"

namespace ptxbench::eval {
namespace {

namespace fs = std::filesystem;

struct pool_fixture {
  suite s;
  const task* t = nullptr;
  const target_info* target = nullptr;
  pipeline_config config;
  build::build_result built;

  pool_fixture() {
    auto loaded = load_suite(testing::repo_root() / "suite");
    EXPECT_TRUE(loaded) << (loaded ? "" : loaded.err().message);
    s = std::move(*loaded);
    t = s.find_task("gemm_n7168_k5120");
    target = s.find_target("h200");
    config.cache_dir = testing::make_temp_dir("session-pool");
    config.gpu.harness = fs::path(PTXBENCH_SOURCE_ROOT) / "tests/eval/fake_harness/fake_harness.py";
    built.shared_object = "/nonexistent/candidate.so";
  }
  ~pool_fixture() { fs::remove_all(config.cache_dir); }

  status run(session_pool& pool, const task& task, const std::string& symbol, bool* started, verdict* out = nullptr) {
    verdict v;
    v.mode = eval_mode::eval;
    v.targets.required_families = target->required_families;
    gpu_candidate c{&built, symbol, &v};
    auto st = pool.evaluate(task, *target, config, c, nullptr, started);
    if (out) *out = v;
    return st;
  }
};

TEST(SessionPool, OneHarnessServesEveryCallForATaskAndProtocol) {
  pool_fixture f;
  session_pool pool;
  bool started = false;
  ASSERT_TRUE(f.run(pool, *f.t, "run", &started));
  EXPECT_TRUE(started);
  pid_t pid = pool.last()->pid();
  verdict v;
  ASSERT_TRUE(f.run(pool, *f.t, "wrong", &started, &v));
  EXPECT_FALSE(started) << "the second call reused the set-up harness";
  EXPECT_EQ(pool.last()->pid(), pid);
  EXPECT_EQ(v.outcome(), eval_outcome::incorrect_numerical) << "a candidate's failure is its verdict";
  EXPECT_EQ(pool.last()->candidates(), 2);
}

TEST(SessionPool, AnotherProtocolGetsItsOwnHarness) {
  pool_fixture f;
  session_pool pool;
  bool started = false;
  ASSERT_TRUE(f.run(pool, *f.t, "run", &started));
  pid_t first = pool.last()->pid();
  task looser = *f.t;
  looser.tol.atol = 0.5;
  ASSERT_TRUE(f.run(pool, looser, "run", &started));
  EXPECT_TRUE(started);
  EXPECT_NE(pool.last()->pid(), first);
  EXPECT_EQ(::kill(first, 0), 0) << "two sessions fit the default limit";
}

TEST(SessionPool, AFailedHarnessIsAnErrorAndTheNextCallStartsAFreshOne) {
  pool_fixture f;
  session_pool pool;
  bool started = false;
  ASSERT_TRUE(f.run(pool, *f.t, "run", &started));
  pid_t first = pool.last()->pid();
  auto died = f.run(pool, *f.t, "infra", &started);
  ASSERT_FALSE(died);
  EXPECT_NE(died.err().message.find("fake infra_error"), std::string::npos) << died.err().message;
  ASSERT_TRUE(f.run(pool, *f.t, "run", &started));
  EXPECT_TRUE(started);
  EXPECT_NE(pool.last()->pid(), first);
}

TEST(SessionPool, TheLeastRecentlyUsedHarnessIsClosedBeyondTheLimit) {
  pool_fixture f;
  session_pool pool(1);
  bool started = false;
  ASSERT_TRUE(f.run(pool, *f.t, "run", &started));
  pid_t first = pool.last()->pid();
  task other = *f.t;
  other.tol.rtol = 0.5;
  ASSERT_TRUE(f.run(pool, other, "run", &started));
  for (int i = 0; i < 100 && ::kill(first, 0) == 0; ++i) ::usleep(50000);
  EXPECT_NE(::kill(first, 0), 0) << "the first harness exited when the second took its place";
}

TEST(SessionPool, AHarnessMakingRoomIsAwaitedEvenWhenTheCallerNeedNotAwaitItsLast) {
  // `ptxbench eval` does not wait for its harnesses at exit (await_harness_exit false), but a harness
  // closed to make room for another task's must be gone before the next one sets up and measures.
  pool_fixture f;
  f.config.await_harness_exit = false;
  session_pool pool(1);
  ASSERT_TRUE(f.run(pool, *f.t, "slow_exit", nullptr));  // this harness takes 2 s to exit
  pid_t first = pool.last()->pid();
  task other = *f.t;
  other.tol.rtol = 0.5;
  ASSERT_TRUE(f.run(pool, other, "run", nullptr));
  EXPECT_NE(::kill(first, 0), 0) << "the first harness had exited (and was reaped) before the second started";
}

TEST(SessionPool, AHarnessThatCannotStartIsAnError) {
  pool_fixture f;
  f.config.gpu.harness = "/nonexistent/ptxbench-harness";
  session_pool pool;
  bool started = true;
  auto st = f.run(pool, *f.t, "run", &started);
  ASSERT_FALSE(st);
  EXPECT_FALSE(started);
  EXPECT_NE(st.err().message.find("starting the GPU harness"), std::string::npos) << st.err().message;
}

}  // namespace
}  // namespace ptxbench::eval
