#include <gtest/gtest.h>

#include "queue/transitions.h"

namespace ptxbench::testing {
namespace {

using namespace queue;

job leased_job(job_state s = job_state::compiling) {
  job j;
  j.id = "j";
  j.state = s;
  j.epoch = 4;
  j.worker = "w";
  j.version = 7;
  j.lease_expires_ms = 999;
  return j;
}

TEST(Transitions, BackOffDoublesUpToTheCap) {
  queue_policy p;
  p.backoff_base_ms = 100;
  p.backoff_max_ms = 500;
  EXPECT_EQ(backoff_ms(p, 1), 100);
  EXPECT_EQ(backoff_ms(p, 2), 200);
  EXPECT_EQ(backoff_ms(p, 3), 400);
  EXPECT_EQ(backoff_ms(p, 4), 500);
  EXPECT_EQ(backoff_ms(p, 60), 500);
}

TEST(Transitions, FencingComparesWorkerEpochAndState) {
  job j = leased_job();
  EXPECT_TRUE(holds(j, {"j", "w", 4}));
  EXPECT_FALSE(holds(j, {"j", "w", 3}));
  EXPECT_FALSE(holds(j, {"j", "x", 4}));
  EXPECT_FALSE(already_reported(j, {"j", "w", 4}));
  job done = after_completed(j, "{}", "", 10);
  EXPECT_FALSE(holds(done, {"j", "w", 4}));
  EXPECT_TRUE(already_reported(done, {"j", "w", 4}));
  job expired = after_expiry(j, queue_policy{}, 10);
  EXPECT_FALSE(already_reported(expired, {"j", "w", 4})) << "expiry bumps the epoch: the old lease is fenced off";
}

TEST(Transitions, InfraFailureWaitsThenFailsAtTheLimit) {
  queue_policy p;
  p.max_infra_failures = 2;
  p.backoff_base_ms = 100;
  job first = after_infra_failure(leased_job(job_state::running), p, "GPU lost", retry_from::same_stage, 1000);
  EXPECT_EQ(first.state, job_state::compiled);
  EXPECT_EQ(first.not_before_ms, 1100);
  EXPECT_EQ(first.epoch, 4);
  EXPECT_EQ(first.version, 8);
  EXPECT_EQ(first.lease_expires_ms, 0);
  first.state = job_state::running;
  job second = after_infra_failure(first, p, "GPU lost again", retry_from::same_stage, 2000);
  EXPECT_EQ(second.state, job_state::failed);
  EXPECT_EQ(second.failure, failure_kind::infra);
  EXPECT_EQ(second.finished_ms, 2000);
  EXPECT_NE(second.error.find("GPU lost again"), std::string::npos);
  EXPECT_TRUE(second.verdict_json.empty());
}

TEST(Transitions, ExpiryRequeuesThenMakesAPoisonPill) {
  queue_policy p;
  p.max_lost_leases = 2;
  job once = after_expiry(leased_job(job_state::running), p, 50);
  EXPECT_EQ(once.state, job_state::compiled);
  EXPECT_EQ(once.epoch, 5);
  EXPECT_EQ(once.lost_leases, 1);
  once.state = job_state::running;
  job twice = after_expiry(once, p, 60);
  EXPECT_EQ(twice.state, job_state::failed);
  EXPECT_EQ(twice.failure, failure_kind::poison_pill);
  EXPECT_TRUE(twice.verdict_json.empty()) << "no verdict strings in the queue: the service makes the outcome";
  EXPECT_EQ(twice.lost_leases, 2);
  EXPECT_NE(twice.error.find("the GPU worker holding this candidate stopped responding 2 times"), std::string::npos)
      << twice.error;
}

TEST(Transitions, ReleaseChangesNoCounter) {
  job r = after_release(leased_job(job_state::compiling), 5);
  EXPECT_EQ(r.state, job_state::queued);
  EXPECT_EQ(r.queued_ms, 5);
  EXPECT_EQ(r.infra_failures + r.lost_leases, 0);
  EXPECT_EQ(r.epoch, 4);
}

TEST(Transitions, NamesRoundTrip) {
  for (auto s : {job_state::queued, job_state::compiling, job_state::compiled, job_state::running, job_state::done,
                 job_state::failed})
    EXPECT_EQ(*parse_job_state(to_string(s)), s);
  for (auto k : {job_kind::evaluate, job_kind::sanitize, job_kind::profile, job_kind::debug})
    EXPECT_EQ(*parse_job_kind(to_string(k)), k);
  EXPECT_FALSE(parse_job_kind("ncu"));
  for (auto f : {failure_kind::infra, failure_kind::poison_pill, failure_kind::no_workloads, failure_kind::unserved})
    EXPECT_EQ(*parse_failure_kind(to_string(f)), f);
  EXPECT_NE(parse_worker_role("tpu").err().message.find("cpu, gpu"), std::string::npos);
}

}  // namespace
}  // namespace ptxbench::testing
