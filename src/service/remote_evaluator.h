#pragma once
// Evaluation through a running service: `ptxbench eval --remote URL` and `ptxbench run --evaluator
// URL` (an evaluator the agent's sweep uses like the local pipeline). A submission carries a random
// request id, so a retry after a lost connection is the same job; while the server restarts the
// client keeps polling, and a task the server no longer knows is submitted again (the content key
// joins the running job or answers from the result cache). No turn is lost or evaluated twice.

#include <atomic>
#include <memory>
#include <string>

#include "core/json_check.h"
#include "core/result.h"
#include "service/service_client.h"
#include "queue/job.h"
#include "verdict/evaluator.h"

namespace ptxbench::service {

/// The verdict a TaskResponse carries (its "ptxbench" field). A failed task is an error (PTXBench
/// could not evaluate it: the error says why, e.g. no GPU worker serves its target).
result<verdict> verdict_of_response(const ordered_json& task_response);

struct remote_options {
  std::string target;  ///< "" = none named: the service's default (its GPU's target)
  queue::job_kind kind = queue::job_kind::evaluate;
  bool bypass_cache = false;
  double poll_slice_s = 30;       ///< one long-poll
  double max_wait_s = 24 * 3600;  ///< give up on a task after this long
};

/// Submits a Solution and waits for its TaskResponse (retrying as described above). When the service
/// refuses the submission (a 4xx answer: the request is wrong), `refused_status` is set to the HTTP
/// status and the error is its detail.
result<ordered_json> evaluate_remotely(service_client& client, const solution& candidate, bool run_on_gpu,
                                       const remote_options& options, int* refused_status = nullptr);

/// The target a service evaluates a submission that names none for: /health's default_target (the
/// service's --target, its local GPUs' target, or the one kind its live GPU workers serve), else the
/// one kind its live GPU workers serve (gpu_kinds). An error when none can be decided (pass
/// --target) or the service cannot be asked.
result<std::string> served_target(service_client& client);

/// An evaluator over HTTP; thread-safe (each call makes its own connections).
std::unique_ptr<evaluator> make_remote_evaluator(client_settings settings, remote_options options);

}  // namespace ptxbench::service
