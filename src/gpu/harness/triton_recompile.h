#pragma once
// The harness's side of the trusted recompile (src/gpu/runner_py/triton_recompile.py): hands it
// kernel.py and the kernels a capture named, in a fresh process that never imports kernel.py, and
// reads back the sha256 of each cubin it compiled. Results are cached by everything that decides
// them (the source, the kernels' compile records, the recompile script and the interpreter), in a
// folder of the harness's own cache that no runner can write.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::gpu {

struct recompile_request {
  std::filesystem::path python;   ///< the GPU host's python3 (with Triton)
  std::filesystem::path script;   ///< triton_recompile.py
  std::filesystem::path source;   ///< the candidate's kernel.py (the stored copy the build stage hashed)
  /// One per kernel: {"id", "jit", "specialization_data"} (from the capture; untrusted).
  std::vector<ordered_json> kernels;
  std::filesystem::path cache_dir;  ///< the harness's cache; results go under triton-recompile/<key>
  double timeout_s = 600;
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
  /// kernels are then empty.
  std::string source_problem;
};

/// Runs (or reuses) the recompile. An error is infrastructure: Python or Triton missing, a crash.
result<recompile_result> recompile_triton_kernels(const recompile_request& request);

}  // namespace ptxbench::gpu
