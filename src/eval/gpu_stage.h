#pragma once
// The GPU half of the pipeline, run from the orchestrator: it writes a job for the trusted harness
// process (ptxbench-harness), runs it with a deadline, and merges the harness's result into the
// verdicts. The orchestrator never loads candidate code; the harness never does either (it starts a
// fresh candidate runner process for that).

#include <vector>

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"
#include "verdict/harness_protocol.h"

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

// The parts run_gpu_stages is made of, shared with the long-lived harness session
// (eval/harness_session.h):

/// The harness job for a task (no candidates yet): the task, the GPU options, the runner beside
/// the harness, a fresh work folder under the cache and the input seed.
harness_job make_harness_job(const task& t, const target_info& target, const pipeline_config& config);
/// What the harness needs to know about one built candidate.
job_candidate make_job_candidate(const gpu_candidate& c, const target_info& target, std::string id);
/// The verdict's environment: the harness's (GPU, driver, libraries, clocks) plus the work folder,
/// the seed and this PTXBench's version.
ordered_json verdict_environment(const ordered_json& harness_environment, const harness_job& job);
/// Completes a verdict with the harness's result for its candidate (stages, decision, environment),
/// leaving the target verdict to decide_target_verdict (a Triton candidate's static SASS comes first).
void merge_gpu_result(const gpu_stage_result& r, const ordered_json& environment, verdict& v);
/// merge_gpu_result, then the target verdict.
void apply_gpu_result(const gpu_stage_result& r, const ordered_json& environment, verdict& v);
/// The longest one candidate's GPU stages may take in a harness that is already set up.
double candidate_deadline_s(const gpu_options& o, const task& t);

}  // namespace ptxbench::eval
