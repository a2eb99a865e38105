#pragma once
// The job state machine as pure functions: given a job and what happened, the job afterwards. Both
// store backends call these, so SQLite and PostgreSQL cannot disagree about what a retry, an expired
// lease or a poison pill does; the backends only read and write rows.

#include <cstdint>
#include <string>

#include "queue/job.h"
#include "queue/job_store.h"

namespace ptxbench::queue {

/// Back-off before retry number k (k >= 1): min(base * 2^(k-1), max). No jitter: one job is retried
/// by one worker at a time, there is no herd to spread, and fixed delays keep tests exact.
int64_t backoff_ms(const queue_policy& policy, int k);

/// The state a job waits in before the stage it was leased for: compiling → queued, running → compiled.
job_state waiting_state_before(job_state leased);

/// Does this lease still hold the job (leased state, same worker, same epoch)?
bool holds(const job& j, const lease_ref& lease);

/// Did this same lease already end the job's lease (a report that is being repeated after an error
/// whose commit may have succeeded)? Expiry bumps the epoch, so a revoked lease never matches.
bool already_reported(const job& j, const lease_ref& lease);

/// Sets the state and the entry time of that state, and bumps the version.
void enter_state(job& j, job_state s, int64_t now_ms);

/// compiling → compiled with the stored artifact.
job after_compiled(job j, const std::string& artifact_sha256, int64_t now_ms);

/// compiling|running → done with the candidate's verdict.
job after_completed(job j, const std::string& verdict_json, const std::string& environment_json, int64_t now_ms);

/// An infrastructure failure: back to the waiting state with a back-off, or failed (infra) when the
/// policy's limit is reached. The epoch is unchanged (the same lease repeating its report must see
/// it as already applied).
job after_infra_failure(job j, const queue_policy& policy, const std::string& error, retry_from from, int64_t now_ms);

/// A lease given back without blame (worker shutdown): back to waiting, no counters change.
job after_release(job j, int64_t now_ms);

/// A lease that expired: the worker died or hung. The epoch goes up (the late worker is fenced off);
/// the job waits again, or fails as a poison pill when it has now lost max_lost_leases workers. The
/// queue writes no verdict for a poison pill (it knows no outcome vocabulary): failure kind
/// poison_pill, the lost leases and a one-line error that names the role that was lost; the service
/// turns that into the candidate's runtime-error verdict (service/task_response.h).
job after_expiry(job j, const queue_policy& policy, int64_t now_ms);

/// A waiting job (queued or compiled) that cannot be served, failed with this kind and error.
job after_unserved(job j, failure_kind why, const std::string& error, int64_t now_ms);

}  // namespace ptxbench::queue
