#pragma once
// The harness's side of the trusted recompile (src/gpu/runner_py/triton_recompile.py): hands it
// kernel.py and the kernels a capture named, in a fresh process that never imports kernel.py, and
// reads back the sha256 of each cubin it compiled. Results are cached by everything that decides
// them (the source, the kernels' compile records, the recompile script and the interpreter), in a
// folder of the harness's own cache that no runner can write.
//
// The process runs Triton's compiler on candidate-written source, so it is confined like the
// capture (docs/sandbox.md): the runner's policy with its own output folder as the only writable
// one, plus CPU-time and memory limits, applied by the script through the runner's helper library.
// A sandbox that cannot be applied, or that stops the process, is an infrastructure error.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "gpu/common/launch_plan.h"

namespace ptxbench::gpu {

struct recompile_request {
  std::filesystem::path python;   ///< the GPU host's python3 (with Triton)
  std::filesystem::path script;   ///< triton_recompile.py
  std::filesystem::path source;   ///< the candidate's kernel.py (the stored copy the build stage hashed)
  /// One per kernel: {"id", "jit", "specialization_data"} (from the capture; untrusted).
  std::vector<ordered_json> kernels;
  std::filesystem::path cache_dir;  ///< the harness's cache; results go under triton-recompile/<key>
  double timeout_s = 600;           ///< wall clock, the whole process
  /// libptxbench_runner_py.so: the candidate sandbox behind the C ABI the script loads.
  std::filesystem::path helper;
  /// Confine the process (the default). false only with the evaluation's --no-sandbox (diagnosis):
  /// the script is then told so explicitly and reports it; it never falls back on its own.
  bool sandbox = true;
  uint64_t cpu_limit_s = 300;                 ///< RLIMIT_CPU of the recompile process
  uint64_t memory_limit_bytes = 16ull << 30;  ///< RLIMIT_DATA of the recompile process
};

struct recompiled_kernel {
  std::string id;
  std::string name;    ///< the cubin's entry function
  std::string sha256;  ///< of the cubin the recompile produced (the harness hashes the file itself)
};

struct recompile_result {
  std::vector<recompiled_kernel> kernels;
  std::string triton_version;
  bool cache_hit = false;
  double seconds = 0;
  /// Set when the candidate's source does not recompile as captured (its problem, one line); the
  /// kernels are then empty. Running out of the CPU-time limit or the wall clock is one.
  std::string source_problem;
  /// The recompile process's sandbox report (as it sent it; {"applied": false, ...} without one).
  ordered_json sandbox;
};

/// Runs (or reuses) the recompile. An error is infrastructure: Python or Triton missing, a crash, a
/// sandbox that could not be applied or that ended the process.
result<recompile_result> recompile_triton_kernels(const recompile_request& request);

/// The file the recompile reads its sandbox policy from: {"sandbox": <policy>}, the runner's
/// policy (sandbox::policy_for_runner) for `out_dir` as its only writable folder and `source` as
/// its candidate, with the request's CPU-time and memory limits.
ordered_json recompile_sandbox_policy(const recompile_request& request, const std::filesystem::path& out_dir);

/// Provenance of a plan's kernels against the recompile: every plan kernel must have a recompiled
/// cubin (matched by the captured cubin's hash, the id the harness gave it) with the same hash and,
/// since the replay looks its function up by name, an entry function of the plan kernel's name.
/// `jit_of` names each captured hash's @triton.jit function, for the messages. Returns one record
/// per plan kernel ({"kernel", "jit", "cubin_sha256"}), or the one-line refusal.
result<ordered_json> check_provenance(const launch_plan& plan, const std::vector<recompiled_kernel>& recompiled,
                                      const std::map<std::string, std::string>& jit_of);

}  // namespace ptxbench::gpu
