// run_worker's promises, on both backends: an evaluator's exception is an infrastructure failure,
// a corrupt artifact sends the job back to be rebuilt, stopping gives the job back, an
// unhealthy worker leases nothing, a lost lease cancels the work and its result is not reported.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/sha256.h"
#include "fake_work.h"
#include "queue_backend.h"
#include "queue/pg_connection.h"
#include "queue/sqlite_connection.h"
#include "queue/open_store.h"

namespace ptxbench::testing {
namespace {

using namespace queue;
using std::chrono::milliseconds;

worker_config config(const std::string& id, worker_role role) {
  worker_config c;
  c.id = id;
  c.role = role;
  c.targets = {"h200"};
  c.lease_ms = 2000;
  c.idle_wait_ms = 20;
  c.max_error_pause_ms = 50;
  return c;
}

/// Polls until pred(job) holds (or 10 s pass).
template <typename Pred>
std::optional<job> wait_until(job_store& store, const std::string& id, Pred pred) {
  for (int i = 0; i < 1000; ++i) {
    auto j = store.get(id);
    if (j && *j && pred(**j)) return **j;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return std::nullopt;
}

using WorkerLoop = QueueBackendTest;

TEST_P(WorkerLoop, AnEvaluatorThatThrowsIsAnInfrastructureFailureNotACrash) {
  auto store = open();
  auto q = store->enqueue({fake_spec(1), "", true});
  worker_callbacks cb;
  cb.compile = [](const job&, const std::atomic<bool>&) -> result<compile_outcome> {
    throw std::runtime_error("nvcc wrapper crashed");
  };
  std::atomic<bool> stop{false};
  result<worker_summary> summary = make_error("not run");
  std::thread t([&] { summary = run_worker(*store, config("cpu", worker_role::cpu), cb, stop); });
  auto failed = wait_until(*store, q->queued.id, [](const job& j) { return j.state == job_state::failed; });
  stop = true;
  t.join();
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->failure, failure_kind::infra);
  EXPECT_NE(failed->error.find("nvcc wrapper crashed"), std::string::npos) << failed->error;
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->infra_failures, 3);
}

TEST_P(WorkerLoop, ACorruptArtifactNeverReachesTheEvaluatorAndIsRebuilt) {
  auto store = open();
  auto q = store->enqueue({fake_spec(7), "", true});
  auto l = store->lease({"cpu", worker_role::cpu, {}, 2000});
  std::string bytes = "artifact";
  ASSERT_TRUE(store->put_artifact(sha256_hex(bytes), bytes));
  ASSERT_TRUE(store->finish_compile(ref_of(**l), sha256_hex(bytes)));
  // Damage the stored bytes behind the store's back (a bad disk, a bad copy).
  auto conn = GetParam() == "postgresql" ? open_pg_connection(m_where, 2)
                                         : open_sqlite_connection(m_dir / "queue" / sqlite_queue_file, 1000);
  ASSERT_TRUE(conn);
  ASSERT_TRUE((*conn)->exec("UPDATE artifacts SET data = $1", {sql_blob{"tampered"}}));
  bool ran = false;
  worker_callbacks cb;
  cb.run = [&](const job&, const std::string&, const std::atomic<bool>&) -> result<run_outcome> {
    ran = true;
    return run_outcome{"{}", std::nullopt};
  };
  std::atomic<bool> stop{false};
  std::thread t([&] { (void)run_worker(*store, config("gpu", worker_role::gpu), cb, stop); });
  auto back = wait_until(*store, q->queued.id, [](const job& j) { return j.state == job_state::queued; });
  stop = true;
  t.join();
  ASSERT_TRUE(back);
  EXPECT_FALSE(ran) << "a corrupt artifact must never reach the evaluator";
  EXPECT_TRUE(back->artifact_sha256.empty());
  EXPECT_EQ(back->infra_failures, 1);
  EXPECT_NE(back->error.find("corrupt"), std::string::npos) << back->error;
}

TEST_P(WorkerLoop, StoppingGivesTheCurrentJobBackWithoutPenalty) {
  auto store = open();
  auto q = store->enqueue({fake_spec(2), "", true});
  std::atomic<bool> started{false};
  worker_callbacks cb;
  cb.compile = [&](const job&, const std::atomic<bool>& cancelled) -> result<compile_outcome> {
    started = true;
    while (!cancelled) std::this_thread::sleep_for(milliseconds(5));
    return make_error("cancelled");
  };
  std::atomic<bool> stop{false};
  result<worker_summary> summary = make_error("not run");
  std::thread t([&] { summary = run_worker(*store, config("cpu", worker_role::cpu), cb, stop); });
  while (!started) std::this_thread::sleep_for(milliseconds(5));
  stop = true;
  t.join();
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->released, 1);
  auto j = store->get(q->queued.id);
  EXPECT_EQ((*j)->state, job_state::queued);
  EXPECT_EQ((*j)->infra_failures, 0);
}

TEST_P(WorkerLoop, AnUnhealthyWorkerLeasesNothingAndSaysWhy) {
  auto store = open();
  auto q = store->enqueue({fake_spec(3), "", true});
  auto cb = fake_callbacks({});
  cb.health = [] { return std::string("GPU 0 fell off the bus"); };
  std::atomic<bool> stop{false};
  std::thread t([&] { (void)run_worker(*store, config("cpu-sick", worker_role::cpu), cb, stop); });
  std::this_thread::sleep_for(milliseconds(300));
  stop = true;
  t.join();
  EXPECT_EQ((*store->get(q->queued.id))->state, job_state::queued);
  auto workers = store->workers();
  ASSERT_TRUE(workers && workers->size() == 1);
  EXPECT_EQ((*workers)[0].health, "GPU 0 fell off the bus");
}

TEST_P(WorkerLoop, ALostLeaseCancelsTheWorkAndItsResultIsNotReported) {
  auto store = open();
  auto q = store->enqueue({fake_spec(4), "", true});
  std::atomic<bool> saw_cancel{false};
  worker_callbacks slow;
  slow.compile = [&](const job& j, const std::atomic<bool>& cancelled) -> result<compile_outcome> {
    for (int i = 0; i < 400 && !cancelled; ++i) std::this_thread::sleep_for(milliseconds(5));
    saw_cancel = cancelled.load();
    return compile_outcome{std::nullopt, fake_verdict(j.content_key), std::nullopt};
  };
  auto c = config("slow", worker_role::cpu);
  c.lease_ms = 100;
  c.heartbeat_ms = 600;  // too late: the lease expires first and another worker takes the job
  std::atomic<bool> stop{false};
  result<worker_summary> summary = make_error("not run");
  std::thread t([&] { summary = run_worker(*store, c, slow, stop); });
  auto taken = wait_until(*store, q->queued.id, [](const job& j) { return j.state == job_state::compiling && j.epoch > 0; });
  ASSERT_TRUE(taken);
  std::this_thread::sleep_for(milliseconds(150));
  auto other = open();
  auto stolen = other->lease({"fast", worker_role::cpu, {}, 5000});  // reaps the expired lease, then takes it
  ASSERT_TRUE(stolen && *stolen);
  ASSERT_TRUE(other->complete(ref_of(**stolen), R"({"status":"COMPILE_ERROR","by":"fast"})", std::nullopt));
  std::this_thread::sleep_for(milliseconds(800));
  stop = true;
  t.join();
  EXPECT_TRUE(saw_cancel) << "the slow worker's heartbeat found the lease gone and cancelled its work";
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->stale_reports, 1);
  EXPECT_EQ(summary->completed, 0);
  auto j = store->get(q->queued.id);
  EXPECT_NE((*j)->verdict_json.find("fast"), std::string::npos);
}

TEST_P(WorkerLoop, AGpuWorkerThatLostItsGpuGivesTheJobBackWithoutPenalty) {
  auto store = open();
  auto q = store->enqueue({fake_spec(5), "", true});
  std::atomic<bool> gpu_lost{false};
  auto cb = fake_callbacks({.inject_infra = false});
  cb.run = [&](const job&, const std::string&, const std::atomic<bool>&) -> result<run_outcome> {
    gpu_lost = true;
    run_outcome out;
    out.release_reason = "GPU 0 is gone (harness could not start)";
    return out;
  };
  cb.health = [&] { return gpu_lost ? std::string("GPU 0 is gone") : std::string("ok"); };
  auto cpu = fake_callbacks({.inject_infra = false});
  std::atomic<bool> stop{false};
  result<worker_summary> summary = make_error("not run");
  std::thread c([&] { (void)run_worker(*store, config("cpu", worker_role::cpu), cpu, stop); });
  std::thread g([&] { summary = run_worker(*store, config("gpu", worker_role::gpu), cb, stop); });
  auto back = wait_until(*store, q->queued.id, [](const job& j) { return j.state == job_state::compiled && j.attempts == 2; });
  stop = true;
  c.join();
  g.join();
  ASSERT_TRUE(back) << "the job waits for a GPU again";
  EXPECT_EQ(back->infra_failures, 0);
  EXPECT_EQ(back->lost_leases, 0);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->released, 1);
  EXPECT_EQ(summary->leased, 1) << "an unhealthy worker leases nothing more";
}

INSTANTIATE_TEST_SUITE_P(Worker, WorkerLoop, ::testing::Values("sqlite", "postgresql"), backend_name);

}  // namespace
}  // namespace ptxbench::testing
