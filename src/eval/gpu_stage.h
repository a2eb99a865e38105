#pragma once
// The GPU half of the pipeline, run from the orchestrator: it writes a job for the trusted harness
// process (ptxbench-harness), runs it with a deadline, and merges the harness's result into the
// verdicts. The orchestrator never loads candidate code; the harness never does either (it starts a
// fresh candidate runner process for that).

#include <vector>

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"

namespace ptxbench::eval {

struct gpu_candidate {
  const build::build_result* built = nullptr;
  std::string symbol = "run";
  verdict* v = nullptr;  ///< filled in place (its CPU stages are already there)
  std::string language = "cuda";  ///< "triton": built->shared_object is the stored kernel.py
};

/// Runs sanitize → correctness → timing → dynamic check for built candidates of one task on the
/// local GPU, in one harness process, and fills each verdict. An error means the harness could not
/// set the task up at all (no GPU, unsupported library): infrastructure, for every candidate.
status run_gpu_stages(const task& t, const target_info& target, std::vector<gpu_candidate>& candidates,
                      const pipeline_config& config);

/// Decides the target-instruction verdict from what the static and dynamic checks established.
void decide_target_verdict(verdict& v);

}  // namespace ptxbench::eval
