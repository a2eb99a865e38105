#include "queue/transitions.h"

#include <algorithm>

#include <fmt/format.h>

namespace ptxbench::queue {

int64_t backoff_ms(const queue_policy& policy, int k) {
  int64_t delay = std::max<int64_t>(policy.backoff_base_ms, 0);
  for (int i = 1; i < k && delay < policy.backoff_max_ms; ++i) delay *= 2;
  return std::min(delay, policy.backoff_max_ms);
}

job_state waiting_state_before(job_state leased) {
  return leased == job_state::running ? job_state::compiled : job_state::queued;
}

bool holds(const job& j, const lease_ref& lease) {
  return is_leased(j.state) && j.epoch == lease.epoch && j.worker == lease.worker;
}

bool already_reported(const job& j, const lease_ref& lease) {
  return !is_leased(j.state) && j.epoch == lease.epoch && j.worker == lease.worker;
}

void enter_state(job& j, job_state s, int64_t now_ms) {
  j.state = s;
  j.version += 1;
  switch (s) {
    case job_state::queued: j.queued_ms = now_ms; break;
    case job_state::compiling: j.compiling_ms = now_ms; break;
    case job_state::compiled: j.compiled_ms = now_ms; break;
    case job_state::running: j.running_ms = now_ms; break;
    case job_state::done:
    case job_state::failed: j.finished_ms = now_ms; break;
  }
  if (!is_leased(s)) j.lease_expires_ms = 0;
}

job after_compiled(job j, const std::string& artifact_sha256, int64_t now_ms) {
  j.artifact_sha256 = artifact_sha256;
  enter_state(j, job_state::compiled, now_ms);
  return j;
}

job after_completed(job j, const std::string& verdict_json, const std::string& environment_json, int64_t now_ms) {
  j.verdict_json = verdict_json;
  j.environment_json = environment_json;
  enter_state(j, job_state::done, now_ms);
  return j;
}

job after_infra_failure(job j, const queue_policy& policy, const std::string& error, retry_from from, int64_t now_ms) {
  j.infra_failures += 1;
  j.error = error;
  if (j.infra_failures >= policy.max_infra_failures) {
    j.failure = failure_kind::infra;
    j.error = fmt::format("infrastructure failure {} times (the limit); last: {}", j.infra_failures, error);
    enter_state(j, job_state::failed, now_ms);
    return j;
  }
  job_state next = from == retry_from::build ? job_state::queued : waiting_state_before(j.state);
  if (next == job_state::queued) j.artifact_sha256.clear();
  j.not_before_ms = now_ms + backoff_ms(policy, j.infra_failures);
  enter_state(j, next, now_ms);
  return j;
}

job after_release(job j, int64_t now_ms) {
  enter_state(j, waiting_state_before(j.state), now_ms);
  return j;
}

job after_expiry(job j, const queue_policy& policy, int64_t now_ms) {
  j.lost_leases += 1;
  j.epoch += 1;
  if (j.lost_leases >= policy.max_lost_leases) {
    j.failure = failure_kind::poison_pill;
    j.error = fmt::format(
        "the {} worker holding this candidate stopped responding {} times (crashed, killed or hung); "
        "PTXBench stopped retrying it",
        j.state == job_state::running ? "GPU" : "CPU", j.lost_leases);
    enter_state(j, job_state::failed, now_ms);
    return j;
  }
  enter_state(j, waiting_state_before(j.state), now_ms);
  return j;
}

job after_unserved(job j, failure_kind why, const std::string& error, int64_t now_ms) {
  j.failure = why;
  j.error = error;
  enter_state(j, job_state::failed, now_ms);
  return j;
}

}  // namespace ptxbench::queue
