#pragma once
// The job the orchestrator hands to ptxbench-harness and the result it gets back. Both are JSON
// files; the orchestrator never shares memory or code with the harness, and the harness never
// loads candidate code itself.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/definition.h"
#include "suite/task.h"
#include "suite/work_model.h"
#include "suite/workload.h"
#include "verdict/gpu_options.h"
#include "verdict/verdict.h"

namespace ptxbench {

struct job_candidate {
  std::string id;                          ///< echoed back in the result
  std::filesystem::path shared_object;
  std::string symbol = "run";
  std::vector<std::string> required_families;  ///< for the dynamic check
  bool static_present = true;              ///< false: the static check found no required family
  bool static_known = false;               ///< false: no disassembler ran (deferred)
  /// "cuda": shared_object is the built .so, loaded by ptxbench-runner; "triton": shared_object is
  /// the stored kernel.py, captured by the Python runner (harness_job::triton) and then replayed;
  /// "plan" (inside the harness only): shared_object is a verified launch plan the C++ runner replays.
  std::string language = "cuda";
  /// The candidate's own kernels (CUDA: the functions of its built object, from the static SASS):
  /// only their instructions count in the dynamic check. Empty: unknown (every kernel but the
  /// runner's own marker counts). A Triton candidate's are its plan's, which the harness knows.
  std::vector<std::string> kernels;
};

/// The GPU options as the harness job carries them (every field the harness applies).
ordered_json to_json(const gpu_options& o);

ordered_json to_json(const job_candidate& c);
result<job_candidate> job_candidate_from_json(const ordered_json& j);

/// What the harness needs to compute the physical floor (eval/physical_floor.h) once it knows the
/// device's L2 size: the task's work at the evaluated workload and the target's peak rates.
struct floor_inputs {
  std::string target;  ///< "h200"
  task_work work;
  target_peaks peaks;
};

ordered_json to_json(const floor_inputs& in);
result<floor_inputs> floor_inputs_from_json(const ordered_json& j);

/// How the harness handles a Triton candidate (src/gpu/runner_py): the GPU host's python3 (with torch
/// and Triton) runs the capture — the bootstrap script, which loads the helper library (the sandbox
/// and the stream capture, in C++) before it imports the candidate — and, separately, the trusted
/// recompile of the kernels the capture names.
struct triton_runtime {
  std::filesystem::path python;   ///< python3
  std::filesystem::path runner;   ///< src/gpu/runner_py/ptxbench_triton_runner.py
  std::filesystem::path helper;   ///< libptxbench_runner_py.so
  std::filesystem::path recompiler;  ///< src/gpu/runner_py/triton_recompile.py (trusted: never imports kernel.py)
};

struct harness_job {
  std::string task_name;
  definition def;
  workload wl;
  std::string baseline;
  ordered_json baseline_options;
  tolerance tol;
  int correctness_trials = 3;
  std::vector<job_candidate> candidates;
  gpu_options options;
  std::filesystem::path runner;
  std::optional<triton_runtime> triton;  ///< set when a candidate is a Triton one
  std::filesystem::path cuda_root;
  std::filesystem::path cache_dir;
  std::filesystem::path work_dir;
  uint64_t seed = 0;
  std::optional<floor_inputs> physical_floor;  ///< the task's work and the target's peaks; nullopt = no floor
};

ordered_json to_json(const harness_job& job);
result<harness_job> harness_job_from_json(const ordered_json& j);

/// What the harness established for one candidate: the GPU stages' records and results, each in
/// the verdict's own types, so the orchestrator merges them without translation.
struct gpu_stage_result {
  std::string id;
  decision decided;
  std::vector<stage_record> stages;
  std::optional<correctness_summary> correctness;
  std::optional<timing_summary> timing;
  measurement_lease measurement;  ///< the device lease's holds of this candidate's stages
  runtime_counts dynamic;
  /// The sandbox of every runner process started for the candidate, by process ("plain",
  /// "sanitize-memcheck", "profile"; a Triton candidate's "capture" and "recompile"): the runner's report (each layer "active", with the "reason"
  /// where it is off) or {"applied": null, "reason"} where none came (docs/sandbox.md, "Reporting").
  /// Kept as the runner's JSON: the verdict records it, nothing here interprets it.
  ordered_json sandbox = ordered_json::object();
  /// Triton: the cubins the candidate's warm-up compiled (copied out of its runner's scratch before
  /// the runner stopped) and the kernels they define. The orchestrator runs the static SASS check
  /// on them (eval/harness_session.cc). Empty for CUDA candidates and when no plan was verified.
  std::vector<std::filesystem::path> jit_cubins;
  std::vector<std::string> jit_kernels;
};

ordered_json to_json(const gpu_stage_result& r);
result<gpu_stage_result> gpu_stage_result_from_json(const ordered_json& j);

/// Completes a verdict that already holds the CPU stages with what the harness established: its
/// decision, its stage records, correctness, timing, the runtime instruction counts and, as
/// environment["sandbox"], the runners' sandbox reports.
void merge_into(const gpu_stage_result& r, verdict& v);

}  // namespace ptxbench
