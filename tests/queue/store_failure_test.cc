// The job store's failure semantics, run against both backends: fencing of late reports, heartbeats,
// expired leases, infrastructure retries with back-off, poison pills, waits that wake, concurrent
// leases, the schema version.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/sha256.h"
#include "fake_work.h"
#include "queue_backend.h"
#include "queue/open_store.h"
#include "queue/pg_connection.h"
#include "queue/sqlite_connection.h"

namespace ptxbench::testing {
namespace {

using namespace queue;
using std::chrono::milliseconds;

lease_request failure_cpu_worker(const std::string& id, int64_t lease_ms = 5000) { return {id, worker_role::cpu, {}, lease_ms}; }

void sleep_ms(int ms) { std::this_thread::sleep_for(milliseconds(ms)); }

int count_events(job_store& store, const std::string& id, const std::string& name) {
  auto h = store.history(id);
  int n = 0;
  if (h)
    for (const auto& e : *h) n += e.event == name;
  return n;
}

using StoreFailures = QueueBackendTest;

TEST_P(StoreFailures, ALateCompletionFromAnExpiredLeaseIsDiscardedAndLogged) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  auto zombie = store->lease(failure_cpu_worker("zombie", 50));
  ASSERT_TRUE(zombie && *zombie);
  sleep_ms(120);
  auto requeued = store->requeue_expired();
  ASSERT_TRUE(requeued);
  EXPECT_EQ(*requeued, 1);
  auto after = store->get((*zombie)->id);
  EXPECT_EQ((*after)->state, job_state::queued);
  EXPECT_EQ((*after)->epoch, (*zombie)->epoch + 1) << "expiry fences the old lease off";
  EXPECT_EQ((*after)->lost_leases, 1);

  auto fresh = store->lease(failure_cpu_worker("fresh"));
  ASSERT_TRUE(fresh && *fresh);
  EXPECT_EQ((*fresh)->id, (*zombie)->id);
  auto late = store->complete(ref_of(**zombie), R"({"status":"PASSED"})", std::nullopt);
  ASSERT_TRUE(late);
  EXPECT_EQ(*late, commit_outcome::stale);
  auto now_ok = store->complete(ref_of(**fresh), R"({"status":"COMPILE_ERROR"})", std::nullopt);
  ASSERT_TRUE(now_ok);
  EXPECT_EQ(*now_ok, commit_outcome::accepted);
  auto j = store->get((*fresh)->id);
  EXPECT_EQ((*j)->verdict_json, R"({"status":"COMPILE_ERROR"})");
  EXPECT_EQ(count_events(*store, (*j)->id, "completed"), 1);
  EXPECT_EQ(count_events(*store, (*j)->id, "stale_completed"), 1);
  EXPECT_EQ(count_events(*store, (*j)->id, "lease_expired"), 1);
}

TEST_P(StoreFailures, ARepeatedReportOfTheSameLeaseAppliesOnce) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  auto l = store->lease(failure_cpu_worker("w"));
  ASSERT_TRUE(l && *l);
  for (int i = 0; i < 3; ++i) {
    auto r = store->complete(ref_of(**l), R"({"status":"COMPILE_ERROR"})", std::nullopt);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, commit_outcome::accepted);
  }
  EXPECT_EQ(count_events(*store, (*l)->id, "completed"), 1);
  auto j = store->get((*l)->id);
  EXPECT_EQ((*j)->version, 3);  // enqueued 1, leased 2, done 3
}

TEST_P(StoreFailures, HeartbeatsKeepALeaseAliveAndAWrongEpochIsStale) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  auto l = store->lease(failure_cpu_worker("w", 400));
  ASSERT_TRUE(l && *l);
  for (int i = 0; i < 6; ++i) {  // 600 ms in all: the lease alone would have expired
    sleep_ms(100);
    auto hb = store->heartbeat(ref_of(**l), 400);
    ASSERT_TRUE(hb);
    EXPECT_EQ(*hb, commit_outcome::accepted);
    auto reaped = store->requeue_expired();
    ASSERT_TRUE(reaped);
    EXPECT_EQ(*reaped, 0) << "a heartbeating lease must not expire (beat " << i << ")";
  }
  lease_ref wrong = ref_of(**l);
  wrong.epoch += 5;
  auto stale = store->heartbeat(wrong, 400);
  ASSERT_TRUE(stale);
  EXPECT_EQ(*stale, commit_outcome::stale);
  lease_ref other_worker = ref_of(**l);
  other_worker.worker = "impostor";
  EXPECT_EQ(*store->heartbeat(other_worker, 400), commit_outcome::stale);
}

TEST_P(StoreFailures, InfrastructureFailuresAreRetriedWithBackOffThenFailedAsInfra) {
  auto store = open();  // max 3 infrastructure failures, back-off 50 ms, 100 ms
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  for (int k = 1; k <= 3; ++k) {
    auto l = store->lease(failure_cpu_worker("w"));
    ASSERT_TRUE(l);
    for (int spin = 0; !*l && spin < 100; ++spin) {  // waiting out the back-off
      sleep_ms(10);
      l = store->lease(failure_cpu_worker("w"));
      ASSERT_TRUE(l);
    }
    ASSERT_TRUE(*l) << "attempt " << k;
    auto f = store->fail_infra(ref_of(**l), "nvcc was killed by the OOM killer", retry_from::same_stage);
    ASSERT_TRUE(f);
    EXPECT_EQ(*f, commit_outcome::accepted);
    auto j = store->get((*l)->id);
    if (k < 3) {
      EXPECT_EQ((*j)->state, job_state::queued);
      EXPECT_EQ((*j)->infra_failures, k);
      EXPECT_GE((*j)->not_before_ms - (*j)->queued_ms, 50 << (k - 1)) << "back-off doubles";
      auto too_soon = store->lease(failure_cpu_worker("w"));
      ASSERT_TRUE(too_soon);
      EXPECT_FALSE(*too_soon) << "a job in back-off is not leased";
    } else {
      EXPECT_EQ((*j)->state, job_state::failed);
      EXPECT_EQ((*j)->failure, failure_kind::infra);
      EXPECT_TRUE((*j)->verdict_json.empty()) << "an infrastructure failure is not a verdict";
      EXPECT_NE((*j)->error.find("OOM killer"), std::string::npos) << (*j)->error;
      EXPECT_EQ(count_events(*store, (*j)->id, "infra_failure"), 2);
      EXPECT_EQ(count_events(*store, (*j)->id, "failed"), 1);
    }
  }
}

TEST_P(StoreFailures, GpuInfraFailureKeepsTheArtifactUnlessItMustBeRebuilt) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  auto c = store->lease(failure_cpu_worker("cpu"));
  std::string bytes = fake_artifact((*c)->content_key);
  ASSERT_TRUE(store->put_artifact(sha256_hex(bytes), bytes));
  ASSERT_TRUE(store->finish_compile(ref_of(**c), sha256_hex(bytes)));
  lease_request gpu{"gpu", worker_role::gpu, {"h200"}, 5000};
  auto g = store->lease(gpu);
  ASSERT_TRUE(g && *g);
  ASSERT_TRUE(store->fail_infra(ref_of(**g), "harness lost", retry_from::same_stage));
  auto j = store->get((*g)->id);
  EXPECT_EQ((*j)->state, job_state::compiled);
  EXPECT_EQ((*j)->artifact_sha256, sha256_hex(bytes));
  sleep_ms(60);
  auto g2 = store->lease(gpu);
  ASSERT_TRUE(g2 && *g2);
  ASSERT_TRUE(store->fail_infra(ref_of(**g2), "artifact corrupt", retry_from::build));
  j = store->get((*g)->id);
  EXPECT_EQ((*j)->state, job_state::queued);
  EXPECT_TRUE((*j)->artifact_sha256.empty());
}

TEST_P(StoreFailures, ACandidateThatKeepsKillingItsWorkerFailsAsAPoisonPill) {
  auto options = test_store_options();
  options.policy.max_lost_leases = 2;
  auto store = open(options);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  std::string id;
  for (int k = 1; k <= 2; ++k) {
    auto l = store->lease(failure_cpu_worker(fmt::format("w{}", k), 30));
    ASSERT_TRUE(l && *l);
    id = (*l)->id;
    sleep_ms(60);
    ASSERT_TRUE(store->requeue_expired());
  }
  auto j = store->get(id);
  ASSERT_TRUE(j && *j);
  EXPECT_EQ((*j)->state, job_state::failed);
  EXPECT_EQ((*j)->failure, failure_kind::poison_pill);
  EXPECT_TRUE((*j)->verdict_json.empty()) << "the queue writes no verdict strings; the service makes the outcome";
  EXPECT_EQ((*j)->error, "the CPU worker holding this candidate stopped responding 2 times (crashed, killed or hung); "
                         "PTXBench stopped retrying it");
  EXPECT_EQ(count_events(*store, id, "poison_pill"), 1);
  auto l = store->lease(failure_cpu_worker("w3"));
  ASSERT_TRUE(l);
  EXPECT_FALSE(*l) << "a poison pill is never leased again";
}

// Issue 27, new-user probe 10: a database outage longer than a lease cut the worker off as much as
// the reaper; the lease it could not extend is not a lost lease (three such outages made an honest
// job a poison pill). The store that regains the database waits one lease length before reaping.
TEST_P(StoreFailures, ADatabaseOutageLongerThanALeaseCostsTheJobNoLostLease) {
  if (GetParam() != "postgresql") GTEST_SKIP() << "an outage of the database server (PostgreSQL only)";
  auto options = test_store_options();
  options.outage_grace_ms = 2000;
  auto worker = open(options), reaper = open(options);
  ASSERT_TRUE(worker && reaper);
  ASSERT_TRUE(worker->enqueue({fake_spec(1), "", true}));
  auto l = worker->lease(cpu_worker("w1", 300));
  ASSERT_TRUE(l && *l);
  const lease_ref ref = ref_of(**l);
  m_server->kill_hard();
  sleep_ms(600);  // twice the lease
  EXPECT_FALSE(reaper->requeue_expired()) << "the database is down";
  EXPECT_FALSE(worker->heartbeat(ref, 300));
  ASSERT_TRUE(m_server->restart());
  auto reaped = reaper->requeue_expired();
  ASSERT_TRUE(reaped) << reaped.err().message;
  EXPECT_EQ(*reaped, 0) << "the lease ran out during the outage: it is given a lease length";
  auto hb = worker->heartbeat(ref, 300);
  ASSERT_TRUE(hb) << hb.err().message;
  EXPECT_EQ(*hb, commit_outcome::accepted);
  auto done = worker->complete(ref, R"({"format":"x"})", std::nullopt);
  ASSERT_TRUE(done) << done.err().message;
  EXPECT_EQ(*done, commit_outcome::accepted);
  auto j = worker->get(ref.job_id);
  ASSERT_TRUE(j && *j);
  EXPECT_EQ((*j)->state, job_state::done);
  EXPECT_EQ((*j)->lost_leases, 0);
  // A store that saw no outage reaps an expired lease at once, as before.
  auto fresh = open(test_store_options());
  ASSERT_TRUE(fresh->enqueue({fake_spec(2), "", true}));
  ASSERT_TRUE(fresh->lease(cpu_worker("w2", 50)));
  sleep_ms(120);
  auto n = fresh->requeue_expired();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1);
}

TEST_P(StoreFailures, AReleasedJobWaitsAgainWithoutPenalty) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(1), "", true}));
  auto l = store->lease(failure_cpu_worker("w"));
  ASSERT_TRUE(store->release(ref_of(**l), "worker stopping"));
  auto j = store->get((*l)->id);
  EXPECT_EQ((*j)->state, job_state::queued);
  EXPECT_EQ((*j)->infra_failures, 0);
  EXPECT_EQ((*j)->lost_leases, 0);
  EXPECT_EQ((*j)->not_before_ms, 0);
  auto again = store->lease(failure_cpu_worker("w2"));
  ASSERT_TRUE(again && *again);
  EXPECT_EQ((*again)->id, (*l)->id);
}

TEST_P(StoreFailures, WaitForChangeWakesWhenAnotherConnectionChangesTheJob) {
  auto waiter = open();
  auto worker = open();
  ASSERT_TRUE(waiter && worker);
  auto q = waiter->enqueue({fake_spec(1), "", true});
  ASSERT_TRUE(q);
  auto t0 = std::chrono::steady_clock::now();
  auto unchanged = waiter->wait_for_change(q->queued.id, q->queued.version, 100);
  ASSERT_TRUE(unchanged && *unchanged);
  EXPECT_EQ((*unchanged)->version, q->queued.version);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(95)) << "the long-poll waits out its timeout";
  std::thread leaser([&] {
    sleep_ms(100);
    (void)worker->lease(failure_cpu_worker("w"));
  });
  t0 = std::chrono::steady_clock::now();
  auto changed = waiter->wait_for_change(q->queued.id, q->queued.version, 5000);
  auto waited = std::chrono::steady_clock::now() - t0;
  leaser.join();
  ASSERT_TRUE(changed && *changed);
  EXPECT_EQ((*changed)->state, job_state::compiling);
  EXPECT_LT(waited, milliseconds(2000)) << "woken by the change, not by the timeout";
}

TEST_P(StoreFailures, WaitForWorkWakesWhenAJobIsEnqueuedElsewhere) {
  auto worker = open();
  auto client = open();
  ASSERT_TRUE(worker && client);
  auto empty = worker->wait_for_work(failure_cpu_worker("w"), 50);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(*empty);
  std::thread producer([&] {
    sleep_ms(100);
    (void)client->enqueue({fake_spec(1), "", true});
  });
  auto t0 = std::chrono::steady_clock::now();
  auto woke = worker->wait_for_work(failure_cpu_worker("w"), 5000);
  producer.join();
  ASSERT_TRUE(woke);
  EXPECT_TRUE(*woke);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(2000));
  lease_request gpu{"g", worker_role::gpu, {"h200"}, 1000};
  auto gpu_sees = worker->wait_for_work(gpu, 50);
  ASSERT_TRUE(gpu_sees);
  EXPECT_FALSE(*gpu_sees) << "a queued job is no work for a gpu worker";
}

TEST_P(StoreFailures, ConcurrentWorkersNeverLeaseTheSameJob) {
  constexpr int jobs = 40, workers = 4;
  {
    auto client = open();
    ASSERT_TRUE(client);
    for (int i = 0; i < jobs; ++i) ASSERT_TRUE(client->enqueue({fake_spec(i), "", true}));
  }
  std::vector<std::vector<std::string>> got(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      auto store = queue::open_job_store(m_where, test_store_options());
      if (!store) return;
      for (int errors = 0; errors < 50;) {
        auto l = (*store)->lease(failure_cpu_worker(fmt::format("w{}", w)));
        if (!l) {
          ++errors;  // busy beyond the store's own retries: try again
          continue;
        }
        if (!*l) break;
        got[w].push_back((*l)->id);
      }
    });
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  std::size_t total = 0;
  for (const auto& g : got) {
    total += g.size();
    all.insert(g.begin(), g.end());
  }
  EXPECT_EQ(total, static_cast<std::size_t>(jobs));
  EXPECT_EQ(all.size(), static_cast<std::size_t>(jobs)) << "a job was leased twice";
}

TEST_P(StoreFailures, TheSchemaVersionIsRecordedAndANewerDatabaseIsRefused) {
  ASSERT_TRUE(open());
  auto conn = GetParam() == "postgresql" ? open_pg_connection(m_where, 2)
                                         : open_sqlite_connection(m_dir / "queue" / sqlite_queue_file, 1000);
  ASSERT_TRUE(conn) << conn.err().message;
  auto v = (*conn)->exec("SELECT MAX(version) FROM schema_version", {});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->integer(0, 0), 1);
  ASSERT_TRUE((*conn)->exec("INSERT INTO schema_version (version, applied_ms) VALUES (99, 0)", {}));
  auto refused = queue::open_job_store(m_where, test_store_options());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.err().message.find("newer"), std::string::npos) << refused.err().message;
}

INSTANTIATE_TEST_SUITE_P(Store, StoreFailures, ::testing::Values("sqlite", "postgresql"), backend_name);

}  // namespace
}  // namespace ptxbench::testing
