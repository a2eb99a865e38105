#include "baselines/graph_replay.h"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <utility>

namespace ptxbench::gpu {

graph_replay::~graph_replay() { clear(); }

void graph_replay::clear() {
  for (auto& [pointers, exec] : m_graphs) cudaGraphExecDestroy(exec);
  m_graphs.clear();
}

void graph_replay::disable(std::string reason) {
  clear();
  m_disabled_reason = reason.empty() ? "disabled" : std::move(reason);
}

std::string graph_replay::mode() const {
  return enabled() ? "CUDA graph replay (the call's launches back to back)"
                   : fmt::format("eager launches ({})", m_disabled_reason);
}

bool graph_replay::capture(const std::vector<void*>& pointers, const enqueue_fn& enqueue, cudaStream_t stream) {
  // Thread-local mode: only this thread's calls are checked for capture safety, so the harness's
  // other threads (CUPTI's buffer callbacks) are unaffected while the call is captured.
  if (cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal); e != cudaSuccess) {
    cudaGetLastError();
    disable(fmt::format("stream capture refused: {}", cudaGetErrorString(e)));
    return false;
  }
  std::string failure;
  try {
    enqueue(stream);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (ended != cudaSuccess && failure.empty()) failure = cudaGetErrorString(ended);
  cudaGraphExec_t exec = nullptr;
  if (failure.empty()) {
    if (cudaError_t e = cudaGraphInstantiate(&exec, graph, 0); e != cudaSuccess) failure = cudaGetErrorString(e);
  }
  if (graph) cudaGraphDestroy(graph);
  if (!failure.empty()) {
    cudaGetLastError();  // capture errors are not sticky; clear them before the eager run
    disable(fmt::format("the call could not be captured: {}", failure));
    return false;
  }
  m_graphs.emplace(pointers, exec);
  return true;
}

void graph_replay::run(const std::vector<void*>& pointers, const enqueue_fn& enqueue, cudaStream_t stream) {
  if (enabled() && !m_graphs.contains(pointers) && m_graphs.size() >= k_max_graphs)
    disable(fmt::format("more than {} buffer sets", k_max_graphs));
  if (!enabled() || (!m_graphs.contains(pointers) && !capture(pointers, enqueue, stream))) {
    enqueue(stream);
    return;
  }
  if (cudaError_t e = cudaGraphLaunch(m_graphs.at(pointers), stream); e != cudaSuccess)
    throw std::runtime_error(fmt::format("CUDA graph launch of the baseline call: {}", cudaGetErrorString(e)));
}

}  // namespace ptxbench::gpu
