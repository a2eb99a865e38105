#pragma once
// `ptxbench-harness --job JOB.json --serve-fds IN,OUT`: one trusted harness for many candidates of
// one task, so its driver (eval/harness_session.h: `ptxbench eval`, the agent's evaluator and the
// service's GPU workers alike) sets the baseline up (plans, autotuning, reference outputs) once per
// task instead of once per candidate. The protocol is one JSON document per line:
//   harness → worker, once: {"ready": {"environment": {...}, "baseline": "..."}}  or {"error": "..."}
//   worker → harness:       {"candidate": <job_candidate>}
//   harness → worker:       {"result": <gpu_stage_result>}  or, when the harness itself failed
//                           (infrastructure, never a verdict), {"error": "..."} and the harness exits
// End of input ends the harness (exit 0). Everything here is CUDA-free (tests/harness runs it with
// a fake evaluation); harness_main.cc plugs in the real harness.

#include <functional>

#include "core/json_check.h"
#include "core/result.h"
#include "verdict/harness_protocol.h"

namespace ptxbench::gpu {

struct serve_hooks {
  /// Sets the task up; returns the "ready" object ({"environment", "baseline"}) or why it cannot.
  std::function<result<ordered_json>()> setup;
  /// Evaluates one candidate (never throws); an error is the harness's own failure.
  std::function<result<gpu_stage_result>(const job_candidate&)> evaluate;
};

/// Runs the protocol on the two descriptors until the input ends. Returns the process exit code:
/// 0 after end of input, 1 when setup failed or an evaluation failed as infrastructure (after
/// reporting it), 2 on a malformed request or a broken pipe.
int serve_candidates(int in_fd, int out_fd, const serve_hooks& hooks);

}  // namespace ptxbench::gpu
