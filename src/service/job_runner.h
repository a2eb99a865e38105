#pragma once
// What a worker does with a leased job, for both roles and both evaluators:
//   - pipeline: the CPU half of PTXBench's pipeline (gate, build, link gate, static SASS) on a CPU
//     worker, the GPU half in a long-lived harness per task on a GPU worker (eval/harness_session.h);
//   - fake (tests only): eval::make_fake_evaluator's made-up verdicts, split the same way, with
//     markers a test uses to inject trouble (docs/service.md, "Testing").
// Both return queue::worker_callbacks for run_worker (service/worker_loop.h). A candidate's failure
// is a verdict; an error is infrastructure and the queue retries it.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "eval/session_pool.h"
#include "eval/pipeline.h"
#include "queue/worker_loop.h"
#include "suite/task.h"
#include "verdict/evaluator.h"

namespace ptxbench::service {

/// A job turned back into an evaluation request: its Solution parsed, its task and target resolved
/// against this worker's suite, and the protocol options applied to a copy of the task (tolerances)
/// and of the pipeline configuration (timeouts, sanitizer tools, which GPU stages run).
struct decoded_job {
  std::unique_ptr<task> t;  ///< a copy: the protocol may change its tolerance
  const target_info* target = nullptr;
  solution candidate;
  bool run_on_gpu = true;
  eval::pipeline_config config;
  [[nodiscard]] eval_request request() const { return {t.get(), target, candidate, run_on_gpu}; }
};
result<decoded_job> decode_job(const queue::job& j, const suite& tasks, const eval::pipeline_config& base);

/// The CPU role with the real pipeline. The artifact is the CPU verdict plus the built .so
/// (serve/artifact_bundle.h); a verdict decided here is final.
queue::worker_callbacks pipeline_cpu_callbacks(const suite& tasks, const eval::pipeline_config& base);

/// The GPU role with the real pipeline, for one device: keeps up to `max_sessions` harness sessions
/// (one per task and protocol) alive, least recently used closed first. When a harness fails, the
/// device is probed (`ptxbench-harness --environment`): a lost GPU gives the job back without penalty
/// and the worker reports itself unhealthy until a probe succeeds again; otherwise the failure is
/// the job's infrastructure failure (retried with back-off by the queue).
class gpu_job_runner {
 public:
  gpu_job_runner(const suite& tasks, eval::pipeline_config base, int max_sessions = 2);
  ~gpu_job_runner();

  /// Probes the device; the environment it reports keys the result cache. Error: no usable GPU.
  result<queue::run_environment> probe();
  queue::worker_callbacks callbacks();
  /// "ok", or why this device is unusable (probes again at most every 30 s while unusable).
  std::string health();

 private:
  result<queue::run_outcome> run(const queue::job& j, const std::string& artifact, const std::atomic<bool>& cancelled);
  const suite& m_tasks;
  eval::pipeline_config m_base;
  eval::session_pool m_sessions;
  std::string m_unhealthy;  ///< "" when healthy
  int64_t m_last_probe_ms = 0;
};

struct fake_options {
  int delay_ms = 0;             ///< the GPU half's time (what the GPU-throughput benchmark measures)
  int cpu_delay_ms = 0;         ///< the CPU half's time
  bool allow_kill_self = false; ///< FAKE_KILL_WORKER kills the GPU worker process (a poison pill)
  bool inject_faults = true;    ///< false: the FAKE_FLAKY_* markers inject nothing (a no-fault run)
  std::string gpu_name = "FAKE H200";  ///< the GPU the fake reports (its suite target: h200)
};

/// TEST-ONLY: the fake evaluator behind both roles. Markers in the kernel source, beyond the fake
/// evaluator's own: FAKE_FLAKY_BUILD / FAKE_FLAKY_GPU fail the first attempt of that half with an
/// infrastructure error; FAKE_KILL_WORKER (with allow_kill_self) SIGKILLs the GPU worker.
queue::worker_callbacks fake_callbacks(const suite& tasks, const fake_options& options);

/// The environments the fake reports (distinct for the two roles, stable across runs).
queue::run_environment fake_cpu_environment();
queue::run_environment fake_gpu_environment(const std::string& gpu_name = "FAKE H200");

}  // namespace ptxbench::service
