#pragma once
// What the orchestrator tells the trusted harness process (ptxbench-harness) about a task and each
// candidate, and what it adds to a verdict from the harness's answer. The harness itself is driven by
// one thing only: a long-lived session (eval/harness_session.h).

#include <filesystem>
#include <optional>
#include <string>

#include "build/build_stage.h"
#include "core/result.h"
#include "eval/pipeline.h"
#include "verdict/harness_protocol.h"

namespace ptxbench::eval {

/// The harness job for a task (no candidates): the task, the GPU options, the runner beside the
/// harness, a fresh work folder under the cache, the input seed and, where this host can run them,
/// the Triton runtime (`triton_missing` says why not otherwise).
harness_job make_harness_job(const task& t, const target_info& target, const pipeline_config& config,
                             std::string* triton_missing = nullptr);

/// The harness executable config names, else the one beside this program.
std::filesystem::path harness_path(const pipeline_config& config);

/// What the harness needs to know about one built candidate: `built` is its shared object (CUDA) or
/// stored kernel.py (Triton), `v` its verdict so far (the static SASS counts).
job_candidate make_job_candidate(const build::build_result& built, const std::string& symbol, const std::string& language,
                                 const verdict& v, const target_info& target, std::string id);

/// The verdict's environment: the harness's (GPU, driver, libraries, clocks) plus the work folder,
/// the seed and this PTXBench's version.
ordered_json verdict_environment(const ordered_json& harness_environment, const harness_job& job);

/// The longest one candidate's GPU stages may take in a harness that is already set up.
double candidate_deadline_s(const gpu_options& o, const task& t);

}  // namespace ptxbench::eval
