#pragma once
// The evaluation pipeline as a short list of stage calls:
//   source_gate → build → link_gate → static_sass → (on a GPU) sanitize → correctness → timing →
//   dynamic_check → verdict.
// Short-circuit policy, in one place: nothing runs after a failed gate or build; the GPU stages run
// only in eval mode; timing and the dynamic check only after correctness passed.

#include <filesystem>
#include <memory>
#include <string>

#include "build/build_stage.h"
#include "build/source_gate.h"
#include "core/result.h"
#include "suite/task.h"
#include "verdict/evaluator.h"
#include "verdict/gpu_options.h"

namespace ptxbench::eval {

struct pipeline_config {
  std::filesystem::path root;       ///< holds suite/, include/, packs/
  std::filesystem::path cache_dir;  ///< build cache
  std::filesystem::path cuda_root;  ///< CUDA toolkit (nvcc, cuobjdump)
  std::filesystem::path python;     ///< python3 for Triton candidates (gate, byte-compile, runner); empty: $PTXBENCH_PYTHON or PATH
  build::source_gate_config gate;
  double compile_timeout_s = 180;
  gpu_options gpu;                  ///< the GPU stages' settings (eval mode)
  /// Whether closing a healthy harness session waits (up to 3 s) for the harness process to exit.
  /// A one-shot command (`ptxbench eval`) that is about to exit sets it false: its harnesses get
  /// end-of-input, tear their CUDA context down by themselves (or are killed with it, the parent-death
  /// signal), and the command's wall clock no longer includes that teardown. Long-lived callers (the
  /// service's workers, the agent) keep waiting, so no harness outlives its session.
  bool await_harness_exit = true;
};

/// Runs the CPU stages (gate, build, link gate, static SASS) for one candidate and fills `v`.
/// Returns the build result when the candidate was built (the GPU stages need its artifact), or
/// nullopt when a stage stopped the pipeline (v then holds the deciding stage). An error means a
/// stage could not run at all (infrastructure).
result<std::optional<build::build_result>> run_cpu_stages(const task& t, const target_info& target,
                                                          const solution& candidate, const pipeline_config& config,
                                                          verdict& v);

/// The stop-early policy, in one place: records that `stage` decided the verdict with `outcome`,
/// and marks every later stage of this mode (up to last_stage(v.mode)) as skipped.
void decide(verdict& v, stage_id stage, eval_outcome outcome, std::string message, std::string log = {});

/// The last stage a mode runs: static_sass in check mode, dynamic_check in eval mode.
stage_id last_stage(eval_mode mode);

/// Where a candidate for `target` finds headers: the kernel ABI and the target's knowledge pack (its
/// own headers and the headers every pack shares, packs/common/include). A pack header names a
/// shared sibling as "common.cuh", exactly as the model reads it in the prompt, so the shared
/// ptxkit folder itself is searched too (nvcc has no -iquote).
std::vector<std::filesystem::path> candidate_include_dirs(const std::filesystem::path& root, const target_info& target);

/// Wraps a single kernel file as a Solution for a task (entry point "<file>::run", DPS).
solution solution_for_kernel_file(const std::string& file_name, const std::string& content, const task& t,
                                  const target_info& target);

/// The evaluator the CLI, the agent and the service use: runs the pipeline on resolved requests; in
/// eval mode the GPU stages run through the trusted harness process, in long-lived sessions kept per
/// task (eval/session_pool.h) across calls.
std::unique_ptr<evaluator> make_pipeline_evaluator(const pipeline_config& config);

}  // namespace ptxbench::eval
