#pragma once
// The GPU half of the pipeline, run from the orchestrator: it writes a job for the trusted harness
// process (ptxbench-harness), runs it with a deadline, and merges the harness's result into the
// verdict. The orchestrator never loads candidate code; the harness never does either (it starts a
// fresh candidate runner process for that).

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"

namespace ptxbench::eval {

/// Runs sanitize → correctness → timing → dynamic check for a built candidate on the local GPU and
/// fills `v`. An error means the harness itself failed (no GPU, crashed): infrastructure.
status run_gpu_stages(const task& t, const target_info& target, const build::build_result& built,
                      const pipeline_config& config, verdict& v);

}  // namespace ptxbench::eval
