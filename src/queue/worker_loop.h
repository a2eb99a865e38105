#pragma once
// The loop every worker runs, whatever it evaluates with: register, lease, keep the lease alive with
// heartbeats while the work runs, report the outcome, repeat. The real CPU and GPU workers and the
// test workers differ only in the callbacks they pass.
//
// What the loop guarantees:
//   - the callback's error is an infrastructure failure (retried by the queue), its verdict is the
//     candidate's result (final); an exception from a callback counts as an infrastructure failure;
//   - every report is retried through database errors until the store answers (reports are
//     idempotent), so a blip never loses a finished evaluation;
//   - a lease found lost (stale heartbeat) cancels the work; the late report is discarded by fencing;
//   - a GPU worker checks the artifact's sha256 before handing it to the callback, and sends a job
//     whose artifact is missing or corrupt back to be rebuilt;
//   - stop: the current job is cancelled and given back without penalty (or reported, if it
//     finished), then the loop returns.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "queue/job_store.h"

namespace ptxbench::queue {

/// What the CPU stages decided: an artifact to run on a GPU, or the candidate's final verdict.
struct compile_outcome {
  std::optional<std::string> artifact;  ///< the built bytes (stored content-addressed) → compiled
  std::string verdict_json;             ///< when there is no artifact: the candidate failed a CPU stage → done
  std::optional<run_environment> environment;  ///< when set, a CPU-decided verdict is also cached
};

/// What the GPU stages decided.
struct run_outcome {
  std::string verdict_json;
  std::optional<run_environment> environment;  ///< set: the verdict enters the result cache
  /// Set instead of a verdict: this worker cannot run the job now through no fault of the job (its GPU
  /// is gone): the lease is given back without penalty and another worker (or this one, healthy
  /// again) takes it. The worker's health callback should say why, or the job comes straight back.
  std::optional<std::string> release_reason;
};

struct worker_callbacks {
  /// cpu role. `cancelled` turns true when the lease is lost or the worker is stopping.
  std::function<result<compile_outcome>(const job&, const std::atomic<bool>& cancelled)> compile;
  /// gpu role; `artifact` has been checked against job.artifact_sha256.
  std::function<result<run_outcome>(const job&, const std::string& artifact, const std::atomic<bool>& cancelled)> run;
  /// Optional: "ok" or one line saying what is wrong; anything else stops leasing until it is ok again.
  std::function<std::string()> health;
  /// Optional: one line per notable event (stale report, store error, infrastructure failure).
  std::function<void(const std::string&)> log;
};

struct worker_config {
  std::string id;                    ///< unique per worker process (and per GPU)
  worker_role role = worker_role::cpu;
  std::vector<std::string> targets;  ///< gpu role: GPU kinds served
  std::string host;
  std::string info_json = "{}";
  int64_t lease_ms = 30000;
  int64_t heartbeat_ms = 0;          ///< 0: lease_ms / 3
  int64_t idle_wait_ms = 1000;       ///< longest wait for work before trying to lease again
  int64_t max_error_pause_ms = 2000; ///< back-off cap while the store is unreachable
  int max_jobs = 0;                  ///< stop after this many finished jobs (0: no limit; tests, benchmarks)
};

struct worker_summary {
  int leased = 0;
  int compiled = 0;        ///< cpu: artifacts handed on
  int completed = 0;       ///< verdicts accepted
  int infra_failures = 0;  ///< callback errors reported
  int stale_reports = 0;   ///< reports discarded because the lease was gone
  int released = 0;
  int store_errors = 0;
};

/// Runs until `stop` is set (or max_jobs is reached). Errors from the store are retried, never
/// returned: the loop only returns an error for a configuration it cannot run (no callback, no id).
result<worker_summary> run_worker(job_store& store, const worker_config& config, const worker_callbacks& callbacks,
                                  const std::atomic<bool>& stop);

}  // namespace ptxbench::queue
