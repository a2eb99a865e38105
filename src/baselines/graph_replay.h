#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ptxbench::gpu {

/// Replays a baseline call as a CUDA graph, so its kernels run back to back on the GPU. Launched
/// eagerly, a reference made of several launches is timed with the host's time between them: the
/// GQA decode reference (a 2 µs prepare kernel, then cuDNN's execute, which spends 30–50 µs of host
/// time before its kernel is enqueued) was 60 µs of GPU work in a 90–140 µs span on an H100, and
/// its median moved by 14 % between evaluations of the same kernel. A graph fixes the launch order
/// and removes the host from between them; the work is the same.
///
/// One graph per set of buffer pointers (the pointers are baked into a captured graph), captured on
/// first use; a call that cannot be captured (the library refuses stream capture) runs eagerly from
/// then on, and `mode()` says so.
class graph_replay {
 public:
  using enqueue_fn = std::function<void(cudaStream_t)>;

  graph_replay() = default;
  graph_replay(const graph_replay&) = delete;
  graph_replay& operator=(const graph_replay&) = delete;
  ~graph_replay();

  /// Enqueues the call on `stream`: the graph captured for `pointers`, capturing it first if new.
  /// Throws what `enqueue` throws (an eager run) or std::runtime_error for a failed graph launch.
  void run(const std::vector<void*>& pointers, const enqueue_fn& enqueue, cudaStream_t stream);
  /// Drops every graph and runs eagerly from now on, with the reason (e.g. a replay that differed).
  void disable(std::string reason);
  /// Drops every graph (the call's fixed buffers changed); capture stays allowed.
  void clear();
  /// "CUDA graph replay" or "eager launches (<why>)", for the baseline's description.
  [[nodiscard]] std::string mode() const;
  [[nodiscard]] bool enabled() const { return m_disabled_reason.empty(); }

 private:
  // More pointer sets than the harness's input sets and the build's sample means something keeps
  // changing buffers: beyond this, calls run eagerly rather than capture without end.
  static constexpr std::size_t k_max_graphs = 16;

  bool capture(const std::vector<void*>& pointers, const enqueue_fn& enqueue, cudaStream_t stream);

  std::map<std::vector<void*>, cudaGraphExec_t> m_graphs;
  std::string m_disabled_reason;
};

}  // namespace ptxbench::gpu
