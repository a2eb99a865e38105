// The job store's contract, run against both backends: enqueue, leases by role and target, the
// lifecycle to done, history, the result cache, artifacts, the workers registry, statistics.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_work.h"
#include "queue_backend.h"
#include "core/sha256.h"
#include "queue/content_key.h"

namespace ptxbench::testing {
namespace {

using namespace queue;

lease_request cpu_worker(const std::string& id, int64_t lease_ms = 5000) {
  return {id, worker_role::cpu, {}, lease_ms};
}
lease_request gpu_worker(const std::string& id, std::vector<std::string> targets = {"h200"}, int64_t lease_ms = 5000) {
  return {id, worker_role::gpu, std::move(targets), lease_ms};
}

std::vector<std::string> event_names(job_store& store, const std::string& id) {
  auto h = store.history(id);
  EXPECT_TRUE(h) << (h ? "" : h.err().message);
  std::vector<std::string> out;
  if (h)
    for (const auto& e : *h) out.push_back(e.event);
  return out;
}

/// Leases a job for the cpu role and compiles it with the fake artifact.
job compiled_job(job_store& store, const std::string& worker = "cpu-1") {
  auto leased = store.lease(cpu_worker(worker));
  EXPECT_TRUE(leased && *leased);
  const job& j = **leased;
  EXPECT_TRUE(store.put_artifact(sha256_hex(fake_artifact(j.content_key)), fake_artifact(j.content_key)));
  auto fin = store.finish_compile(ref_of(j), sha256_hex(fake_artifact(j.content_key)));
  EXPECT_TRUE(fin && *fin == commit_outcome::accepted);
  return j;
}

using StoreLifecycle = QueueBackendTest;

TEST_P(StoreLifecycle, EnqueueStoresAQueuedJobWithItsKey) {
  auto store = open();
  ASSERT_TRUE(store);
  auto spec = fake_spec(1);
  auto r = store->enqueue({spec, "", true});
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->created);
  const job& j = r->queued;
  EXPECT_EQ(j.id.size(), 32u);
  EXPECT_EQ(j.content_key, *content_key(spec));
  EXPECT_EQ(j.state, job_state::queued);
  EXPECT_GT(j.submitted_ms, 0);
  auto got = store->get(j.id);
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((*got)->spec.solution_json, spec.solution_json);
  EXPECT_EQ((*got)->spec.task, "gemm");
  EXPECT_EQ((*got)->version, 1);
  EXPECT_EQ(event_names(*store, j.id), std::vector<std::string>{"enqueued"});
  auto none = store->get("0123456789abcdef0123456789abcdef");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
}

TEST_P(StoreLifecycle, EnqueueIsIdempotentByRequestId) {
  auto store = open();
  ASSERT_TRUE(store);
  auto first = store->enqueue({fake_spec(1), "client-7/turn-3", false});
  auto again = store->enqueue({fake_spec(1), "client-7/turn-3", false});
  ASSERT_TRUE(first && again);
  EXPECT_TRUE(first->created);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(first->queued.id, again->queued.id);
  auto other = store->enqueue({fake_spec(2), "client-7/turn-3", false});
  ASSERT_FALSE(other);
  EXPECT_NE(other.err().message.find("already used"), std::string::npos) << other.err().message;
  auto stats = store->stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->depth[job_state::queued], 1);
}

TEST_P(StoreLifecycle, EnqueueJoinsAnActiveJobWithTheSameKeyUnlessAskedNotTo) {
  auto store = open();
  ASSERT_TRUE(store);
  auto a = store->enqueue({fake_spec(1), "", true});
  auto b = store->enqueue({fake_spec(1), "", true});
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(b->created);
  EXPECT_EQ(a->queued.id, b->queued.id);
  auto c = store->enqueue({fake_spec(1), "", false});  // bypass: a new evaluation
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->created);
  EXPECT_NE(c->queued.id, a->queued.id);
  auto newest = store->find_by_key(a->queued.content_key);
  ASSERT_TRUE(newest && *newest);
  EXPECT_EQ((*newest)->id, c->queued.id);
}

TEST_P(StoreLifecycle, BadSpecsAreRejectedAndStoreNothing) {
  auto store = open();
  ASSERT_TRUE(store);
  auto bad_json = fake_spec(1);
  bad_json.solution_json = "{not json";
  auto dup = fake_spec(1);
  dup.solution_json = R"({"definition":"gemm","spec":{},"sources":[{"path":"a.cu","content":""},{"path":"a.cu","content":"x"}]})";
  auto wrong_task = fake_spec(1);
  wrong_task.task = "attention";
  auto bad_protocol = fake_spec(1);
  bad_protocol.protocol_json = "[1]";
  for (const auto& spec : {bad_json, dup, wrong_task, bad_protocol}) {
    auto r = store->enqueue({spec, "", true});
    EXPECT_FALSE(r);
  }
  auto stats = store->stats();
  ASSERT_TRUE(stats);
  for (const auto& [state, n] : stats->depth) EXPECT_EQ(n, 0) << to_string(state);
}

TEST_P(StoreLifecycle, CpuLeasesOldestFirstAndGpuOnlyCompiledJobsOfItsTarget) {
  auto store = open();
  ASSERT_TRUE(store);
  auto h200 = store->enqueue({fake_spec(1), "", true});
  auto b200_spec = fake_spec(2);
  b200_spec.target = "b200";
  auto b200 = store->enqueue({b200_spec, "", true});
  ASSERT_TRUE(h200 && b200);
  auto none = store->lease(gpu_worker("gpu-h200"));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none) << "a gpu worker must not take a job that is not compiled";
  job first = compiled_job(*store);
  job second = compiled_job(*store);
  EXPECT_EQ(first.id, h200->queued.id);
  EXPECT_EQ(second.id, b200->queued.id);
  auto b = store->lease(gpu_worker("gpu-b200", {"b200"}));
  ASSERT_TRUE(b && *b);
  EXPECT_EQ((*b)->id, b200->queued.id);
  EXPECT_EQ((*b)->state, job_state::running);
  auto nothing_for_b200 = store->lease(gpu_worker("gpu-b200b", {"b200"}));
  ASSERT_TRUE(nothing_for_b200);
  EXPECT_FALSE(*nothing_for_b200);
  auto h = store->lease(gpu_worker("gpu-h200", {"h100", "h200"}));
  ASSERT_TRUE(h && *h);
  EXPECT_EQ((*h)->id, h200->queued.id);
}

TEST_P(StoreLifecycle, AJobGoesThroughEveryStateToDoneAndItsVerdictIsCached) {
  auto store = open();
  ASSERT_TRUE(store);
  auto q = store->enqueue({fake_spec(3), "", true});
  ASSERT_TRUE(q);
  job c = compiled_job(*store);
  EXPECT_EQ(c.state, job_state::compiling);
  EXPECT_EQ(c.epoch, 1);
  auto g = store->lease(gpu_worker("gpu-1"));
  ASSERT_TRUE(g && *g);
  const job& running = **g;
  EXPECT_EQ(running.epoch, 2);
  EXPECT_EQ(running.attempts, 2);
  EXPECT_EQ(running.worker, "gpu-1");
  EXPECT_EQ(running.artifact_sha256, sha256_hex(fake_artifact(running.content_key)));
  std::string verdict = fake_verdict(running.content_key);
  auto done = store->complete(ref_of(running), verdict, fake_environment());
  ASSERT_TRUE(done) << done.err().message;
  EXPECT_EQ(*done, commit_outcome::accepted);
  auto final_job = store->get(running.id);
  ASSERT_TRUE(final_job && *final_job);
  const job& f = **final_job;
  EXPECT_EQ(f.state, job_state::done);
  EXPECT_EQ(f.verdict_json, verdict);
  EXPECT_EQ(f.failure, failure_kind::none);
  for (int64_t t : {f.submitted_ms, f.queued_ms, f.compiling_ms, f.compiled_ms, f.running_ms, f.finished_ms})
    EXPECT_GT(t, 0);
  EXPECT_LE(f.queued_ms, f.compiling_ms);
  EXPECT_LE(f.compiled_ms, f.running_ms);
  EXPECT_LE(f.running_ms, f.finished_ms);
  EXPECT_EQ(event_names(*store, f.id),
            (std::vector<std::string>{"enqueued", "leased", "compiled", "leased", "completed"}));

  auto hit = store->cached(f.content_key, fake_environment());
  ASSERT_TRUE(hit && *hit);
  EXPECT_EQ((*hit)->verdict_json, verdict);
  EXPECT_EQ((*hit)->job_id, f.id);
  auto other_env = fake_environment();
  other_env.driver = "999.1";
  auto miss = store->cached(f.content_key, other_env);
  ASSERT_TRUE(miss);
  EXPECT_FALSE(*miss) << "a verdict from another driver is not the same result";
}

TEST_P(StoreLifecycle, ACandidateRejectedOnTheCpuIsDoneWithItsVerdict) {
  auto store = open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->enqueue({fake_spec(4), "", true}));
  auto l = store->lease(cpu_worker("cpu-1"));
  ASSERT_TRUE(l && *l);
  auto r = store->complete(ref_of(**l), R"({"status":"COMPILE_ERROR"})", std::nullopt);
  ASSERT_TRUE(r && *r == commit_outcome::accepted);
  auto j = store->get((*l)->id);
  EXPECT_EQ((*j)->state, job_state::done);
  EXPECT_EQ((*j)->failure, failure_kind::none);
  auto not_json = store->complete(ref_of(**l), "COMPILE_ERROR", std::nullopt);
  EXPECT_FALSE(not_json) << "a verdict must be a JSON object";
}

TEST_P(StoreLifecycle, ArtifactsAreContentAddressed) {
  auto store = open();
  ASSERT_TRUE(store);
  std::string bytes("\x7f" "ELF\0\x01\x02 binary", 15);
  EXPECT_FALSE(store->put_artifact(sha256_hex("something else"), bytes)) << "name must be the content's sha256";
  ASSERT_TRUE(store->put_artifact(sha256_hex(bytes), bytes));
  ASSERT_TRUE(store->put_artifact(sha256_hex(bytes), bytes)) << "storing twice is harmless";
  auto got = store->get_artifact(sha256_hex(bytes));
  ASSERT_TRUE(got && *got);
  EXPECT_EQ(**got, bytes);
  auto missing = store->get_artifact(sha256_hex("nope"));
  ASSERT_TRUE(missing);
  EXPECT_FALSE(*missing);
  ASSERT_TRUE(store->enqueue({fake_spec(5), "", true}));
  auto l = store->lease(cpu_worker("cpu-1"));
  ASSERT_TRUE(l && *l);
  EXPECT_FALSE(store->finish_compile(ref_of(**l), sha256_hex("never stored")));
}

TEST_P(StoreLifecycle, WorkersRegistryRecordsHealthAndCurrentJob) {
  auto store = open();
  ASSERT_TRUE(store);
  worker_info w{"gpu-0@host", worker_role::gpu, "host", 42, {"h200"}, "ok", "", 0, 0, R"({"device":0})"};
  ASSERT_TRUE(store->register_worker(w));
  ASSERT_TRUE(store->worker_heartbeat("gpu-0@host", "harness lost", "abc"));
  EXPECT_FALSE(store->worker_heartbeat("nobody", "ok", ""));
  auto list = store->workers();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].role, worker_role::gpu);
  EXPECT_EQ((*list)[0].targets, std::vector<std::string>{"h200"});
  EXPECT_EQ((*list)[0].health, "harness lost");
  EXPECT_EQ((*list)[0].current_job, "abc");
  EXPECT_EQ((*list)[0].info_json, R"({"device":0})");
  EXPECT_GT((*list)[0].last_seen_ms, 0);
}

TEST_P(StoreLifecycle, StatsCountEveryStateAndNameTheOldestWaitingJob) {
  auto store = open();
  ASSERT_TRUE(store);
  auto first = store->enqueue({fake_spec(1), "", true});
  ASSERT_TRUE(first);
  for (int i = 2; i <= 4; ++i) ASSERT_TRUE(store->enqueue({fake_spec(i), "", true}));
  compiled_job(*store);  // the first job, now compiled (still waiting, for a GPU)
  auto l = store->lease(cpu_worker("cpu-2"));
  ASSERT_TRUE(l && *l);
  auto s = store->stats();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->depth[job_state::queued], 2);
  EXPECT_EQ(s->depth[job_state::compiling], 1);
  EXPECT_EQ(s->depth[job_state::compiled], 1);
  EXPECT_EQ(s->depth[job_state::done], 0);
  EXPECT_FALSE(s->oldest_waiting_id.empty());
  EXPECT_GT(s->now_ms, 0);
  EXPECT_LE(s->oldest_waiting_since_ms, s->now_ms);
}

TEST_P(StoreLifecycle, ReopeningTheQueueKeepsEverything) {
  std::string id;
  {
    auto store = open();
    ASSERT_TRUE(store);
    auto q = store->enqueue({fake_spec(9), "r-9", true});
    ASSERT_TRUE(q);
    id = q->queued.id;
  }
  auto again = open();
  ASSERT_TRUE(again);
  auto j = again->get(id);
  ASSERT_TRUE(j && *j);
  EXPECT_EQ((*j)->request_id, "r-9");
  auto same = again->enqueue({fake_spec(9), "r-9", true});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->queued.id, id);
}

TEST_P(StoreLifecycle, ACachedSubmissionIsANewJobDoneAtOnceThatNamesTheMeasuringJob) {
  auto store = open();
  ASSERT_TRUE(store);
  cached_verdict hit{R"({"status":"PASSED"})", "measuring-job", environment_json(fake_environment()), 1234};
  auto r = store->enqueue_cached({fake_spec(7), "req-7", true}, hit);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->created);
  EXPECT_EQ(r->queued.state, job_state::done);
  EXPECT_EQ(r->queued.verdict_json, hit.verdict_json);
  EXPECT_EQ(r->queued.environment_json, hit.environment_json);
  EXPECT_EQ(event_names(*store, r->queued.id), (std::vector<std::string>{"enqueued", "cache_hit"}));
  auto h = store->history(r->queued.id);
  ASSERT_TRUE(h);
  EXPECT_NE(h->back().detail.find("measuring-job"), std::string::npos);
  EXPECT_NE(h->back().detail.find("1234"), std::string::npos);
  // The same request id again is the same job; nothing was queued for a worker.
  auto again = store->enqueue_cached({fake_spec(7), "req-7", true}, hit);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->queued.id, r->queued.id);
  auto leased = store->lease(cpu_worker("cpu-1"));
  ASSERT_TRUE(leased);
  EXPECT_FALSE(*leased);
  EXPECT_FALSE(store->enqueue_cached({fake_spec(8), "", true}, {"not json", "x", "{}", 1}));
}

TEST_P(StoreLifecycle, SummariesListUnfinishedJobsAndThoseFinishedSinceAGivenTime) {
  auto store = open();
  ASSERT_TRUE(store);
  auto a = store->enqueue({fake_spec(1), "", true});
  auto b = store->enqueue({fake_spec(2), "", true});
  ASSERT_TRUE(a && b);
  auto leased = store->lease(cpu_worker("cpu-1"));
  ASSERT_TRUE(leased && *leased);
  ASSERT_TRUE(store->complete(ref_of(**leased), R"({"status":"COMPILE_ERROR"})", std::nullopt));
  auto all = store->summaries(0);
  ASSERT_TRUE(all) << all.err().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, a->queued.id);
  EXPECT_EQ((*all)[0].state, job_state::done);
  EXPECT_EQ((*all)[0].worker, "cpu-1");
  EXPECT_EQ((*all)[0].attempts, 1);
  EXPECT_GT((*all)[0].finished_ms, 0);
  EXPECT_EQ((*all)[1].state, job_state::queued);
  EXPECT_EQ((*all)[1].task, "gemm");
  auto later = store->summaries((*all)[0].finished_ms + 1);
  ASSERT_TRUE(later);
  ASSERT_EQ(later->size(), 1u) << "a job finished before the given time is left out, an unfinished one is not";
  EXPECT_EQ((*later)[0].id, b->queued.id);
}

INSTANTIATE_TEST_SUITE_P(Store, StoreLifecycle, ::testing::Values("sqlite", "postgresql"), backend_name);

}  // namespace
}  // namespace ptxbench::testing
