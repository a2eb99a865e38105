#pragma once
// TEST-ONLY evaluator for the queue tests, the fake worker process and the queue benchmark: like
// src/eval/fake_evaluator (which decides from markers in the kernel source), but its verdict is a
// pure function of the job's content key, so "the verdict equals the no-fault run's" is checkable
// for any number of distinct jobs, and it injects one infrastructure failure into a quarter of the
// jobs so the retry path runs in every fault test. Its verdicts are made up.
//
// From the content key's hex digits: key[0] in 0-1 → COMPILE_ERROR decided by the CPU stage (no
// artifact); 2-3 → INCORRECT_NUMERICAL; 4 → RUNTIME_ERROR; else PASSED with a speedup from key[1..3].
// key[4] in 0-3 → the job's first attempt fails with an infrastructure error (CPU stage when
// key[5] < 8 or the verdict is decided on the CPU, GPU stage otherwise). A kernel containing
// FAKE_KILL_WORKER kills its GPU worker process (a poison pill) when allow_kill_self is set.

#include <string>

#include "queue/job.h"
#include "queue/worker_loop.h"

namespace ptxbench::testing {

struct fake_work_options {
  int cpu_ms = 0;  ///< fixed time per compile
  int gpu_ms = 0;  ///< fixed time per run (the benchmark measures queue overhead against it)
  bool allow_kill_self = false;
  bool inject_infra = true;
};

/// The verdict the fake gives a job (deterministic JSON text).
std::string fake_verdict(const std::string& content_key);
/// Whether that verdict is decided on the CPU (no GPU stage).
bool fake_decided_on_cpu(const std::string& content_key);
/// The artifact bytes the fake CPU stage builds for a job.
std::string fake_artifact(const std::string& content_key);
queue::run_environment fake_environment();

queue::worker_callbacks fake_callbacks(const fake_work_options& options);

/// A FlashInfer Solution JSON for `task` with one source kernel.cu holding `code`.
std::string fake_solution(const std::string& task, const std::string& code, const std::string& name = "k");
/// A distinct evaluate job for task "gemm", target "h200", numbered i.
queue::job_spec fake_spec(int i, const std::string& extra_code = "");

}  // namespace ptxbench::testing
