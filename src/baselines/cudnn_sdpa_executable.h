#pragma once
// A built, autotuned cuDNN attention operation ready to run: the winning graph variant and
// execution plan, a cuDNN handle and a preallocated workspace. Building tries every graph variant
// that applies (unified and composite), finalizes the plans the heuristics offer, times each on
// the caller's buffers and keeps the fastest; nothing of that happens inside run(). With a cache
// folder the choice is remembered per host (core/tuned_choice.h) and later builds rebuild exactly
// that plan instead of tuning again, so every process measures against the same one.

#include <cuda_runtime.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_plan.h"
#include "baselines/cudnn_sdpa_graph.h"

namespace ptxbench::gpu::cudnn {

enum class sdpa_direction { forward, backward };

/// What to try and how hard to tune.
struct sdpa_config {
  std::vector<sdpa_graph_kind> kinds;  ///< graph variants to try; empty = default_graph_kinds()
  int max_plans_per_graph = 4;         ///< engine configs finalized per graph
  int timing_iterations = 5;           ///< timed executions per plan while autotuning
};

/// The variants worth trying for a direction on this cuDNN: unified first where it can apply
/// (forward, non-causal, cuDNN >= 9.13.1; backward, non-causal, cuDNN >= 9.20 with 9.19+ headers,
/// since 9.19 does not implement it), then composite. The build autotunes across all of them.
std::vector<sdpa_graph_kind> default_graph_kinds(sdpa_direction direction, bool causal, version runtime);

/// Checks the problem against what this baseline and the loaded cuDNN support; the error names the
/// requirement ("D must be a multiple of 8 and at most 256", "needs cuDNN >= 9.0", ...).
status check_sdpa_support(sdpa_direction direction, const sdpa_problem& problem, version runtime, int sm_major);

/// What happened to one graph variant while building.
struct graph_attempt {
  sdpa_graph_kind kind = sdpa_graph_kind::composite_fwd;
  std::string error;                 ///< empty when the graph built and at least one plan ran
  std::vector<std::string> plans;    ///< "<plan label>: <median ms>" or "<plan label>: <failure>"
  std::vector<std::string> rejected; ///< engine configs that did not finalize
};

class sdpa_executable {
 public:
  /// Enqueues the operation on `stream`. io_pointers: the task's tensors, inputs then outputs in
  /// definition order (forward Q,K,V,O,LSE; backward Q,K,V,O,dO,L,dQ,dK,dV). Throws
  /// std::runtime_error (cudnn_error) with cuDNN's text when the launch fails.
  void run(const std::vector<void*>& io_pointers, cudaStream_t stream);

  /// One line: cuDNN version, graph variant, engine, how it was chosen.
  [[nodiscard]] const std::string& description() const { return m_description; }
  [[nodiscard]] sdpa_graph_kind kind() const { return m_graph->kind; }
  [[nodiscard]] const plan_candidate& plan() const { return m_plan; }
  /// What this build tried (empty when the plan came from the cache: nothing was tried).
  [[nodiscard]] const std::vector<graph_attempt>& attempts() const { return m_attempts; }
  /// True when the plan was the one remembered in the cache folder (no tuning in this build).
  [[nodiscard]] bool from_cache() const { return m_from_cache; }

  ~sdpa_executable();

 private:
  friend result<std::shared_ptr<sdpa_executable>> build_sdpa_executable(sdpa_direction, const sdpa_problem&,
                                                                         const sdpa_config&,
                                                                         const std::vector<void*>&, cudaStream_t,
                                                                         const std::filesystem::path&);
  sdpa_executable() = default;
  const descriptor& pack_for(const std::vector<void*>& io_pointers);

  std::mutex m_mutex;
  std::unique_ptr<handle> m_handle;
  std::unique_ptr<sdpa_graph> m_graph;
  plan_candidate m_plan;
  void* m_workspace = nullptr;        // plan workspace, then the graph's scratch tensors
  int64_t m_workspace_bytes = 0;
  std::vector<int64_t> m_scratch_offsets;
  std::vector<void*> m_last_io;       // the pointers m_pack was built for
  descriptor m_pack;
  std::vector<graph_attempt> m_attempts;
  std::string m_description;
  bool m_from_cache = false;
};

/// What identifies a remembered choice's problem: direction, B, H, S, D, causal, the scale's bits,
/// bf16, the GPU's name and compute capability, the loaded cuDNN and the headers, the variants tried
/// and the plans per variant. The GPU index is not in it: GPUs of one name share the choice.
std::string sdpa_tuned_choice_key(sdpa_direction direction, const sdpa_problem& problem,
                                  const std::vector<sdpa_graph_kind>& kinds, const sdpa_config& config, int device);

/// Builds and autotunes (on io_pointers, whose outputs it overwrites) on the current device.
/// Fails with a message naming the requirement or every variant's cuDNN failure; never crashes.
/// cache_dir (may be empty): where the choice is remembered — the graph variant, the heuristic mode,
/// the plan's index in find_plans' list, its engine id and label. A remembered choice is rebuilt
/// (that variant only, that plan, which must still finalize, match and run once on io_pointers);
/// anything else tunes now and overwrites it. The description says "autotuned now" or "autotuned
/// earlier, from the cache".
result<std::shared_ptr<sdpa_executable>> build_sdpa_executable(sdpa_direction direction, const sdpa_problem& problem,
                                                               const sdpa_config& config,
                                                               const std::vector<void*>& io_pointers,
                                                               cudaStream_t stream,
                                                               const std::filesystem::path& cache_dir = {});

}  // namespace ptxbench::gpu::cudnn
