#pragma once
// The seam between whoever wants a candidate evaluated (the CLI, the agent, the service) and the
// pipeline that does it. Tests substitute a fake.

#include <string>
#include <vector>

#include "core/result.h"
#include "suite/solution.h"
#include "suite/task.h"
#include "verdict/verdict.h"

namespace ptxbench {

/// One candidate for one task on one target. The caller resolves the task and target once, from the
/// suite it loaded once per process; both must outlive the evaluation.
struct eval_request {
  const task* t = nullptr;
  const target_info* target = nullptr;
  solution candidate;        ///< the sources to build (usually one kernel.cu)
  bool run_on_gpu = true;    ///< false: stop after the CPU stages (what `ptxbench check` does)
};

/// Evaluates candidates. A returned error means the *evaluation* failed (infrastructure: tool
/// missing, GPU lost, harness crashed); anything the candidate did wrong is a verdict.
class evaluator {
 public:
  virtual ~evaluator() = default;
  virtual result<verdict> evaluate(const eval_request& request) = 0;

  /// Evaluates several candidates of one task; the pipeline shares one trusted harness (and one
  /// baseline setup) between them. One result per request, in order.
  virtual std::vector<result<verdict>> evaluate_batch(const std::vector<eval_request>& requests) {
    std::vector<result<verdict>> out;
    for (const auto& r : requests) out.push_back(evaluate(r));
    return out;
  }
};

}  // namespace ptxbench
