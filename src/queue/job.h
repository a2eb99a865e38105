#pragma once
// The evaluation service's unit of work: a job (what a client asked for), its state machine and the
// records the durable queue keeps about it. Plain data; the rules that move a job between states
// live in service/transitions.h and the storage in service/job_store.h.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxbench::queue {

/// What a job asks for; the same names as upstream's endpoints (/evaluate, /sanitize, /profile,
/// /debug: a sanitizer run whose answer is a structured debug report).
enum class job_kind { evaluate, sanitize, profile, debug };

/// queued → compiling → compiled → running → done | failed. A candidate's own failure (compile error,
/// wrong result, crash) is a verdict and ends in `done`; `failed` is reserved for jobs PTXBench could
/// not evaluate (infrastructure failures past the retry limit, a poison pill, a request that names no
/// workload of its definition, a job nothing can serve).
enum class job_state { queued, compiling, compiled, running, done, failed };

/// Which jobs a worker takes: cpu workers lease `queued` jobs (source gate, build, link gate, static
/// SASS), gpu workers lease `compiled` jobs whose target is one of theirs.
enum class worker_role { cpu, gpu };

/// Why a job is `failed` (empty while it is not).
enum class failure_kind {
  none,
  infra,         ///< infrastructure failures past the retry limit
  poison_pill,   ///< it took down max_lost_leases workers (the candidate's failure: a runtime error)
  no_workloads,  ///< none of the requested workload uuids belongs to the definition (upstream: a failed task)
  unserved,      ///< it waited with no live worker able to take it (no CPU worker, or none for its target)
};

std::string_view to_string(job_kind k);
std::string_view to_string(job_state s);
std::string_view to_string(worker_role r);
std::string_view to_string(failure_kind f);
result<job_kind> parse_job_kind(std::string_view text);
result<job_state> parse_job_state(std::string_view text);
result<worker_role> parse_worker_role(std::string_view text);
result<failure_kind> parse_failure_kind(std::string_view text);

/// The states a worker holds under a lease (compiling, running) and the terminal ones.
bool is_leased(job_state s);
bool is_terminal(job_state s);

/// What a client submits. Everything here (and only this) goes into the content key.
struct job_spec {
  job_kind kind = job_kind::evaluate;
  std::string task;                    ///< definition name
  std::string target;                  ///< GPU kind the verdict is for ("h200", "b200")
  std::string solution_json;           ///< FlashInfer Solution JSON, as submitted
  std::vector<std::string> workloads;  ///< workload uuids; empty = every workload of the task
  std::string protocol_json = "{}";    ///< protocol options (atol, rtol, timeout, ...) as a JSON object
};

/// A stored job: the spec plus everything the queue learned while running it.
struct job {
  std::string id;           ///< 32 random hex digits, never reused
  std::string content_key;  ///< see service/content_key.h
  std::string request_id;   ///< the client's idempotency key ("" when none was given)
  job_spec spec;

  job_state state = job_state::queued;
  int64_t version = 0;         ///< +1 on every state change (not on heartbeats); long-polls wait on it
  int64_t epoch = 0;           ///< fencing token: +1 on every lease and every lease revocation
  int attempts = 0;            ///< leases taken, both stages
  int infra_failures = 0;      ///< infrastructure failures reported by workers
  int lost_leases = 0;         ///< leases that expired (the worker died or hung)
  std::string worker;          ///< the worker holding it, or the last one that did
  int64_t lease_expires_ms = 0;
  int64_t not_before_ms = 0;   ///< back-off after an infrastructure failure

  // Wall-clock times (ms since the Unix epoch) of the latest entry into each state; 0 = never.
  int64_t submitted_ms = 0, queued_ms = 0, compiling_ms = 0, compiled_ms = 0, running_ms = 0, finished_ms = 0;

  std::string artifact_sha256;   ///< of the built artifact (set when compiled)
  std::string verdict_json;      ///< set when done (and for a poison pill)
  failure_kind failure = failure_kind::none;
  std::string error;             ///< one line, when failed
  std::string environment_json;  ///< the environment that produced the verdict
};

/// One line of a job's history (enqueued, leased, compiled, completed, ...). The history is what
/// proves "completed exactly once": there is one `completed` event per done job.
struct job_event {
  int64_t at_ms = 0;
  std::string event;
  job_state state = job_state::queued;  ///< the state after the event
  std::string worker;
  int64_t epoch = 0;
  std::string detail;
};

/// What the result cache is keyed by besides the content key: a verdict measured under another GPU,
/// driver or library version is not the same result.
struct run_environment {
  std::string gpu_model;  ///< "NVIDIA H200"; empty for verdicts decided on the CPU
  std::string driver;
  std::string cuda;
  std::string cublaslt;
  std::string cudnn;
  std::string ptxbench;   ///< version + commit
};

/// Canonical JSON of the environment (fixed field order) and its sha256, the cache's second key.
std::string environment_json(const run_environment& env);
std::string environment_key(const run_environment& env);

/// Milliseconds since the Unix epoch, from the system clock.
int64_t wall_clock_ms();

}  // namespace ptxbench::queue
