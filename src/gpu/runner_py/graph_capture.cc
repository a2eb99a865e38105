#include "gpu/runner_py/graph_capture.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <vector>

#include <fmt/format.h>

#include "gpu/common/ipc_tensor.h"

namespace ptxbench::gpu {
namespace {

std::string runtime_error_text(cudaError_t e, const std::string& what) {
  return fmt::format("{} failed: {}: {}", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

/// The few driver functions the graph walk needs, looked up through cudart rather than linked: this
/// library is also loaded on hosts without a GPU (the runner's unit tests), where libcuda.so.1 is
/// absent and a link-time dependency on it would stop the load. decltype of the header's names
/// gives the ABI version the headers select (cuGraphKernelNodeGetParams is its _v2).
struct driver_api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGraphKernelNodeGetParams) kernel_node_params = nullptr;
  decltype(&::cuGraphKernelNodeGetAttribute) kernel_node_attribute = nullptr;
  decltype(&::cuKernelGetFunction) kernel_function = nullptr;
  decltype(&::cuFuncGetName) function_name = nullptr;
  decltype(&::cuFuncGetParamInfo) parameter_info = nullptr;
};

template <class F>
bool look_up(F& out, const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, CUDA_VERSION, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn)
    return false;
  out = reinterpret_cast<F>(fn);
  return true;
}

result<const driver_api*> driver() {
  static const auto api = [] {
    std::optional<driver_api> d(std::in_place);
    bool ok = look_up(d->get_error_name, "cuGetErrorName") && look_up(d->kernel_node_params, "cuGraphKernelNodeGetParams") &&
              look_up(d->kernel_node_attribute, "cuGraphKernelNodeGetAttribute") &&
              look_up(d->kernel_function, "cuKernelGetFunction") && look_up(d->function_name, "cuFuncGetName") &&
              look_up(d->parameter_info, "cuFuncGetParamInfo");
    if (!ok) d.reset();
    return d;
  }();
  if (!api) return make_error("the CUDA driver's graph functions could not be looked up (driver too old?)");
  return &*api;
}

std::string driver_error_text(const driver_api& d, CUresult r, const std::string& what) {
  const char* name = nullptr;
  d.get_error_name(r, &name);
  return fmt::format("{} failed: {}", what, name ? name : "?");
}


/// The nodes in an order every dependency respects; ties keep the graph's own (creation) order.
result<std::vector<cudaGraphNode_t>> dependency_order(cudaGraph_t graph) {
  size_t n = 0;
  if (auto e = cudaGraphGetNodes(graph, nullptr, &n); e != cudaSuccess) return make_error(runtime_error_text(e, "cudaGraphGetNodes"));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n && cudaGraphGetNodes(graph, nodes.data(), &n) != cudaSuccess) return make_error("cudaGraphGetNodes failed");
  std::map<cudaGraphNode_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[nodes[i]] = i;
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<std::size_t>> dependents(n);
  for (std::size_t i = 0; i < n; ++i) {
    // With an edge-data array: a programmatic (PDL) edge is a dependency too, and asking without one
    // would be refused as a lossy query.
    size_t d = 0;
    if (cudaGraphNodeGetDependencies(nodes[i], nullptr, nullptr, &d) != cudaSuccess) return make_error("cudaGraphNodeGetDependencies failed");
    std::vector<cudaGraphNode_t> deps(d);
    std::vector<cudaGraphEdgeData> edges(d);
    if (d && cudaGraphNodeGetDependencies(nodes[i], deps.data(), edges.data(), &d) != cudaSuccess)
      return make_error("cudaGraphNodeGetDependencies failed");
    waiting[i] = static_cast<int>(d);
    for (auto dep : deps) dependents[index.at(dep)].push_back(i);
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<cudaGraphNode_t> out;
  while (!ready.empty()) {
    std::size_t i = ready.top();
    ready.pop();
    out.push_back(nodes[i]);
    for (auto j : dependents[i])
      if (--waiting[j] == 0) ready.push(j);
  }
  if (out.size() != n) return make_error("the captured graph has a cycle");
  return out;
}

result<ordered_json> describe_kernel(cudaGraphNode_t node) {
  auto api = driver();
  if (!api) return api.err();
  const driver_api& d = **api;
  auto cu = reinterpret_cast<CUgraphNode>(node);
  CUDA_KERNEL_NODE_PARAMS p{};
  if (CUresult r = d.kernel_node_params(cu, &p); r != CUDA_SUCCESS)
    return make_error(driver_error_text(d, r, "cuGraphKernelNodeGetParams"));
  CUfunction f = p.func;
  if (!f && p.kern)
    if (CUresult r = d.kernel_function(&f, p.kern); r != CUDA_SUCCESS)
      return make_error(driver_error_text(d, r, "cuKernelGetFunction"));
  if (!f) return make_error("a kernel node without a function");
  const char* name = nullptr;
  if (CUresult r = d.function_name(&name, f); r != CUDA_SUCCESS) return make_error(driver_error_text(d, r, "cuFuncGetName"));
  if (p.extra) return make_error(fmt::format("kernel {} was launched with 'extra' parameters (not replayable)", name ? name : "?"));
  ordered_json params = ordered_json::array();
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (d.parameter_info(f, i, &offset, &size) != CUDA_SUCCESS) break;
    if (!p.kernelParams || !p.kernelParams[i]) return make_error(fmt::format("kernel {} parameter {} has no value", name, i));
    params.push_back(bytes_hex(static_cast<const unsigned char*>(p.kernelParams[i]), size));
  }
  CUlaunchAttributeValue cluster{}, cooperative{};
  unsigned cx = 1, cy = 1, cz = 1;
  if (d.kernel_node_attribute(cu, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, &cluster) == CUDA_SUCCESS &&
      cluster.clusterDim.x) {
    cx = cluster.clusterDim.x;
    cy = std::max(1u, cluster.clusterDim.y);
    cz = std::max(1u, cluster.clusterDim.z);
  }
  bool coop = d.kernel_node_attribute(cu, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &cooperative) == CUDA_SUCCESS &&
              cooperative.cooperative != 0;
  return ordered_json{{"kind", "kernel"},
                      {"function", std::to_string(reinterpret_cast<uint64_t>(f))},
                      {"name", name ? name : ""},
                      {"grid", {p.gridDimX, p.gridDimY, p.gridDimZ}},
                      {"block", {p.blockDimX, p.blockDimY, p.blockDimZ}},
                      {"shared_bytes", p.sharedMemBytes},
                      {"cluster", {cx, cy, cz}},
                      {"cooperative", coop},
                      {"params", params}};
}

}  // namespace

status begin_stream_capture(uint64_t stream) {
  if (auto e = cudaStreamBeginCapture(reinterpret_cast<cudaStream_t>(stream), cudaStreamCaptureModeRelaxed); e != cudaSuccess)
    return make_error(runtime_error_text(e, "cudaStreamBeginCapture"));
  return ok();
}

result<ordered_json> end_stream_capture(uint64_t stream) {
  cudaGraph_t graph = nullptr;
  if (auto e = cudaStreamEndCapture(reinterpret_cast<cudaStream_t>(stream), &graph); e != cudaSuccess || !graph) {
    (void)cudaGetLastError();
    return make_error(runtime_error_text(e, "ending the capture of run() (a synchronisation, a host read, or work on "
                                            "another stream not joined back breaks it)"));
  }
  ordered_json nodes = ordered_json::array();
  auto order = dependency_order(graph);
  if (!order) {
    cudaGraphDestroy(graph);
    return order.err();
  }
  for (auto node : *order) {
    cudaGraphNodeType type{};
    if (cudaGraphNodeGetType(node, &type) != cudaSuccess) {
      cudaGraphDestroy(graph);
      return make_error("cudaGraphNodeGetType failed");
    }
    if (type == cudaGraphNodeTypeKernel) {
      auto k = describe_kernel(node);
      if (!k) {
        cudaGraphDestroy(graph);
        return k.err();
      }
      nodes.push_back(std::move(*k));
    } else if (type == cudaGraphNodeTypeMemset) {
      cudaMemsetParams m{};
      if (cudaGraphMemsetNodeGetParams(node, &m) != cudaSuccess) {
        cudaGraphDestroy(graph);
        return make_error("cudaGraphMemsetNodeGetParams failed");
      }
      nodes.push_back({{"kind", "memset"},
                       {"dst", reinterpret_cast<uint64_t>(m.dst)},
                       {"value", m.value},
                       {"element_size", m.elementSize},
                       {"width", m.width},
                       {"height", m.height},
                       {"pitch", m.pitch}});
    } else if (type == cudaGraphNodeTypeEmpty) {
      continue;  // joins between streams: no work
    } else {
      static const std::map<cudaGraphNodeType, const char*> names = {
          {cudaGraphNodeTypeMemcpy, "copy"}, {cudaGraphNodeTypeHost, "host callback"},
          {cudaGraphNodeTypeGraph, "child graph"}, {cudaGraphNodeTypeWaitEvent, "event wait"},
          {cudaGraphNodeTypeEventRecord, "event record"}, {cudaGraphNodeTypeMemAlloc, "allocation"},
          {cudaGraphNodeTypeMemFree, "free"}};
      auto it = names.find(type);
      nodes.push_back({{"kind", it == names.end() ? std::string("other") : std::string(it->second)}});
    }
  }
  cudaGraphDestroy(graph);
  return ordered_json{{"nodes", nodes}};
}

}  // namespace ptxbench::gpu
