#pragma once
// The durable job queue behind `ptxbench serve` and `ptxbench worker`: one interface, two backends
// (SQLite for one host, PostgreSQL 15 for many; service/open_store.h picks one from a URL). Every
// method is safe to call from several threads, never throws, and reports database trouble as an
// error the caller can retry: every mutating call is idempotent when repeated after an error.
//
// Fencing: a worker's lease is (job id, worker id, epoch). The epoch goes up on every lease and
// every revocation (expiry), so a worker presumed dead that reports late carries an old epoch, and
// its report is discarded (commit_outcome::stale) and logged in the job's history.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "queue/job.h"

namespace ptxbench::queue {

/// Retry rules; the same for every process that opens the store.
struct queue_policy {
  int max_infra_failures = 3;     ///< the job fails (infra) at this many infrastructure failures
  int max_lost_leases = 3;        ///< ... and as a poison pill at this many expired leases
  int64_t backoff_base_ms = 1000; ///< wait before retry k (1-based): min(base * 2^(k-1), max)
  int64_t backoff_max_ms = 60000;
};

struct store_options {
  queue_policy policy;
  int poll_interval_ms = 50;     ///< waits re-check the database at least this often
  bool use_notify = true;        ///< PostgreSQL: LISTEN/NOTIFY wake-ups (false: polling only)
  int busy_timeout_ms = 10000;   ///< SQLite: how long a writer waits for the lock
  int reap_interval_ms = 1000;   ///< lease() requeues expired leases at most this often
  int connect_timeout_s = 5;     ///< PostgreSQL
  /// After this process gets the database back from an outage, expired leases are left alone for
  /// this long (the lease length: time for live workers, cut off just the same, to heartbeat again),
  /// so an outage longer than a lease is not counted against jobs as lost leases.
  int64_t outage_grace_ms = 30000;
  /// What opening may create: the queue and its folders (serve, tests), the queue file only inside an
  /// existing folder (a worker joining a queue), or nothing (commands that only read).
  enum class open_mode { create, join, existing } mode = open_mode::create;
};

struct enqueue_request {
  job_spec spec;
  std::string request_id;   ///< optional client idempotency key: the same id returns the same job
  bool join_active = true;  ///< return an unfinished job with the same content key instead of a new one
};

struct enqueue_result {
  job queued;
  bool created = false;  ///< false: an existing job (same request id, or same key and still active)
};

struct lease_request {
  std::string worker;
  worker_role role = worker_role::cpu;
  std::vector<std::string> targets;  ///< gpu role: the GPU kinds this worker serves (cpu: ignored)
  int64_t lease_ms = 30000;
};

/// What a worker must show to change a job it leased.
struct lease_ref {
  std::string job_id;
  std::string worker;
  int64_t epoch = 0;
};
inline lease_ref ref_of(const job& j) { return {j.id, j.worker, j.epoch}; }

enum class commit_outcome {
  accepted,  ///< applied (or had already been applied by this same lease)
  stale,     ///< the lease is no longer this worker's: nothing changed, the attempt was logged
};

/// Where a job goes after an infrastructure failure on a gpu worker.
enum class retry_from {
  same_stage,  ///< compiling → queued, running → compiled (the artifact is still good)
  build,       ///< back to queued: rebuild (the artifact was missing or did not match its sha256)
};

struct worker_info {
  std::string id;
  worker_role role = worker_role::cpu;
  std::string host;
  int64_t pid = 0;
  std::vector<std::string> targets;
  std::string health = "ok";   ///< "ok" or one line saying what is wrong
  std::string current_job;     ///< "" when idle
  int64_t started_ms = 0, last_seen_ms = 0;
  std::string info_json = "{}";  ///< devices, versions: whatever the worker reports
};

struct queue_stats {
  std::map<job_state, int64_t> depth;  ///< every state present, zero included
  std::string oldest_waiting_id;       ///< oldest queued/compiled job ("" when none waits)
  int64_t oldest_waiting_since_ms = 0; ///< when it entered its waiting state
  int64_t now_ms = 0;                  ///< the store's clock when counted
};

struct cached_verdict {
  std::string verdict_json;
  std::string job_id;  ///< the job that measured it
  std::string environment_json;
  int64_t evaluated_ms = 0;
};

/// A job without its texts (solution, verdict): what statistics, /metrics and `ptxbench jobs` read.
struct job_summary {
  std::string id;
  job_kind kind = job_kind::evaluate;
  std::string task, target;
  job_state state = job_state::queued;
  failure_kind failure = failure_kind::none;
  std::string worker;  ///< the last holder (for a job finished on a GPU: that GPU worker)
  int attempts = 0;
  int64_t version = 0;  ///< the row's version, for a conditional write such as fail_waiting
  int64_t submitted_ms = 0, queued_ms = 0, compiling_ms = 0, compiled_ms = 0, running_ms = 0, finished_ms = 0;
};

class job_store {
 public:
  virtual ~job_store() = default;
  [[nodiscard]] virtual std::string_view backend() const = 0;  ///< "sqlite" or "postgresql"

  // ---- clients ----
  virtual result<enqueue_result> enqueue(const enqueue_request& request) = 0;
  virtual result<std::optional<job>> get(const std::string& id) = 0;
  /// The newest job with this content key (any state), for a client that resubmits by key.
  virtual result<std::optional<job>> find_by_key(const std::string& content_key) = 0;
  /// Returns the job as soon as its version differs from known_version, or as it is after timeout_ms
  /// (long-poll). nullopt: no such job.
  virtual result<std::optional<job>> wait_for_change(const std::string& id, int64_t known_version,
                                                     int64_t timeout_ms) = 0;
  virtual result<std::vector<job_event>> history(const std::string& id) = 0;
  virtual result<queue_stats> stats() = 0;
  virtual result<std::optional<cached_verdict>> cached(const std::string& content_key,
                                                       const run_environment& env) = 0;
  /// A submission answered from the result cache: a new job (its own id, the request's solution text)
  /// that is `done` at once with the cached verdict and environment; its history says `cache_hit` with
  /// the measuring job and time (detail: {"job_id": ..., "evaluated_ms": ...}). A request id already
  /// used returns that job instead (created: false), exactly as enqueue does.
  virtual result<enqueue_result> enqueue_cached(const enqueue_request& request, const cached_verdict& hit) = 0;
  /// A submission accepted but known at once to be impossible (upstream answers it with a failed
  /// task, e.g. no requested workload belongs to the definition): a new job that is `failed` at once
  /// with this failure kind and one-line error, nothing for a worker to lease. A request id already
  /// used returns that job (created: false), as enqueue does.
  virtual result<enqueue_result> enqueue_failed(const enqueue_request& request, failure_kind why,
                                                const std::string& error) = 0;
  /// Fails a job that waits in `waiting` (queued or compiled) at `version` because nothing can serve
  /// it. False (and no change) when the job has moved on since: a worker took it after all.
  virtual result<bool> fail_waiting(const std::string& id, job_state waiting, int64_t version, failure_kind why,
                                    const std::string& error) = 0;
  /// Every unfinished job and every job finished at or after finished_since_ms (0: all jobs), oldest
  /// submission first, without their texts.
  virtual result<std::vector<job_summary>> summaries(int64_t finished_since_ms) = 0;

  // ---- workers ----
  /// Takes the oldest eligible job (cpu: queued → compiling; gpu: compiled → running with a matching
  /// target), or nullopt. Requeues expired leases first (at most every reap_interval_ms).
  virtual result<std::optional<job>> lease(const lease_request& request) = 0;
  /// Blocks until a job this worker could lease may exist (a notification or a poll finds one) or the
  /// timeout passes; true when one was seen.
  virtual result<bool> wait_for_work(const lease_request& request, int64_t timeout_ms) = 0;
  virtual result<commit_outcome> heartbeat(const lease_ref& lease, int64_t lease_ms) = 0;
  /// compiling → compiled; the artifact must already be stored (put_artifact).
  virtual result<commit_outcome> finish_compile(const lease_ref& lease, const std::string& artifact_sha256) = 0;
  /// compiling|running → done with the candidate's verdict. With env, the verdict also enters the
  /// result cache under (content key, env), in the same transaction.
  virtual result<commit_outcome> complete(const lease_ref& lease, const std::string& verdict_json,
                                          const std::optional<run_environment>& env) = 0;
  /// An infrastructure failure: retried after a back-off, or failed (infra) at the policy's limit.
  virtual result<commit_outcome> fail_infra(const lease_ref& lease, const std::string& error, retry_from from) = 0;
  /// Gives the job back unchanged (worker shutting down, GPU lost before it started): no penalty.
  virtual result<commit_outcome> release(const lease_ref& lease, const std::string& reason) = 0;
  /// Requeues every job whose lease has expired (a poison pill fails instead); returns how many.
  virtual result<int> requeue_expired() = 0;

  // ---- content-addressed artifacts (built .so / cubin) ----
  virtual status put_artifact(const std::string& sha256, const std::string& bytes) = 0;
  virtual result<std::optional<std::string>> get_artifact(const std::string& sha256) = 0;

  // ---- workers registry ----
  virtual status register_worker(const worker_info& info) = 0;  ///< insert or replace; sets last_seen
  virtual status worker_heartbeat(const std::string& id, const std::string& health,
                                  const std::string& current_job) = 0;
  virtual result<std::vector<worker_info>> workers() = 0;
};

}  // namespace ptxbench::queue
