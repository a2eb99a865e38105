#pragma once
// The pipeline cut at the CPU/GPU boundary, so the evaluation service can run the halves on
// different hosts: a CPU worker runs the first half and ships the built object; a GPU worker runs the
// second half in a long-lived harness (eval/harness_session.h). The local evaluator
// (make_pipeline_evaluator) is the same two halves run back to back, so both paths give one verdict.

#include <optional>

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"
#include "verdict/evaluator.h"

namespace ptxbench::eval {

struct cpu_half {
  verdict v;                                 ///< the CPU stages' records (complete when built is unset)
  std::optional<build::build_result> built;  ///< set: the GPU stages must run on this object next
};

/// Checks the (resolved) request, runs the CPU stages and, when nothing is left to run — a gate or
/// the build decided, check mode, or a target verified statically only here — completes the verdict.
/// An error is infrastructure (or a request that cannot be evaluated at all, such as a task whose
/// reference is pending).
result<cpu_half> run_cpu_half(const eval_request& request, const pipeline_config& config);

/// Completes a verdict no stage adds to any more: work coverage and the FlashInfer trace.
void finish_verdict(verdict& v, const eval_request& request, const pipeline_config& config);

}  // namespace ptxbench::eval
