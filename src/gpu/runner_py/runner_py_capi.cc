// libptxbench_runner_py.so: what the Triton runner (ptxbench_triton_runner.py, a python3 process)
// needs from PTXBench's C++ side, behind a small C ABI it loads with ctypes before any candidate
// code exists in the process: the candidate sandbox (src/sandbox, the very policy the C++ runner
// applies), the CUPTI activity tracer (src/gpu/common, the spans and kernel names the harness
// reads), and the CUDA runtime calls torch offers no public API for (opening and closing CUDA IPC
// handles, exact-size allocations for compute-sanitizer, the profiler window for Nsight Compute),
// and the runner's side of the shared go/done page (core/sync_channel.h), so a Triton call is
// bracketed by the harness's clock exactly like a C++ runner's.
//
// Why ctypes is fine here while the gate forbids it in the candidate: this library and the
// bootstrap that loads it are trusted code that runs before the candidate is imported; the gate
// keeps the candidate from reaching native code itself (no ctypes, no sys.modules, no dynamic
// attribute access), and what a candidate could still reach through data flow it cannot use to
// hide work: the harness compares outputs itself and checks kernel provenance and mappings.
//
// Every function returns 0 on success and writes a one-line message into `err` (or a JSON text
// into `out`) otherwise; none throws across the C boundary.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/sync_channel.h"
#include "gpu/common/activity_tracer.h"
#include "gpu/common/ipc_tensor.h"
#include "gpu/runner_py/graph_capture.h"
#include "sandbox/runner_integration.h"

namespace {

std::unique_ptr<ptxbench::gpu::activity_tracer> g_tracer;
ptxbench::sync_channel g_sync;  // the shared go/done page (--sync-fd), when attached

// Copies text into a caller's buffer; returns 0 when it fit, 2 when it was cut (then the caller
// may retry with a larger buffer for JSON it must parse).
int put(const std::string& text, char* out, size_t cap) {
  if (!out || cap == 0) return 2;
  size_t n = std::min(text.size(), cap - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return n == text.size() ? 0 : 2;
}

int cuda_fail(cudaError_t e, const char* what, char* err, size_t cap) {
  put(std::string(what) + " failed: " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e), err, cap);
  return 1;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int ptxbench_rp_abi_version() { return 3; }

__attribute__((visibility("default"))) int ptxbench_rp_set_device(int device, char* err, size_t cap) {
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return cuda_fail(e, "cudaSetDevice", err, cap);
  if (auto e = cudaFree(nullptr); e != cudaSuccess) return cuda_fail(e, "CUDA context creation", err, cap);
  return 0;
}

/// setup_json: {"sandbox": <policy>} (or without "sandbox": nothing is applied and the report says
/// so). out: the report as JSON ({"applied": true, ...}) or, on failure (return 1), the reason.
__attribute__((visibility("default"))) int ptxbench_rp_apply_sandbox(const char* setup_json, char* out, size_t cap) {
  try {
    auto setup = nlohmann::ordered_json::parse(setup_json ? setup_json : "{}");
    auto report = ptxbench::sandbox::apply_requested_sandbox(setup);
    if (!report) {
      put(report.err().message, out, cap);
      return 1;
    }
    return put(report->dump(), out, cap);
  } catch (const std::exception& e) {
    put(std::string("the sandbox request is not valid JSON: ") + e.what(), out, cap);
    return 1;
  }
}

__attribute__((visibility("default"))) int ptxbench_rp_tracer_start(char* err, size_t cap) {
  if (g_tracer) return 0;
  auto t = ptxbench::gpu::activity_tracer::start();
  if (!t) {
    put(t.err().message, err, cap);
    return 1;
  }
  g_tracer = std::move(*t);
  return 0;
}

__attribute__((visibility("default"))) uint64_t ptxbench_rp_tracer_now() { return g_tracer ? g_tracer->now() : 0; }

/// out: {"span_ns", "records", "kernels": [...]} for the records between t0 and t1.
__attribute__((visibility("default"))) int ptxbench_rp_tracer_collect(uint64_t t0, uint64_t t1, char* out, size_t cap) {
  if (!g_tracer) return put("{\"span_ns\":0,\"records\":0,\"kernels\":[]}", out, cap);
  auto span = g_tracer->collect(t0, t1);
  nlohmann::ordered_json j = {{"span_ns", span.records ? span.end_ns - span.start_ns : 0},
                              {"records", span.records},
                              {"kernels", span.kernels}};
  return put(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), out, cap);
}

__attribute__((visibility("default"))) int ptxbench_rp_ipc_open(const char* handle_hex, uint64_t* ptr, char* err, size_t cap) {
  auto handle = ptxbench::gpu::handle_from_hex(handle_hex ? handle_hex : "");
  if (!handle) {
    put(handle.err().message, err, cap);
    return 1;
  }
  void* base = nullptr;
  if (auto e = cudaIpcOpenMemHandle(&base, *handle, cudaIpcMemLazyEnablePeerAccess); e != cudaSuccess)
    return cuda_fail(e, "cudaIpcOpenMemHandle", err, cap);
  *ptr = reinterpret_cast<uint64_t>(base);
  return 0;
}

__attribute__((visibility("default"))) int ptxbench_rp_ipc_close(uint64_t ptr) {
  return cudaIpcCloseMemHandle(reinterpret_cast<void*>(ptr)) == cudaSuccess ? 0 : 1;
}

/// An exact-size allocation (not from torch's caching allocator): compute-sanitizer's --padding
/// sees every byte past its end, as for the C++ runner's private copies.
__attribute__((visibility("default"))) int ptxbench_rp_malloc(uint64_t bytes, uint64_t* ptr, char* err, size_t cap) {
  void* p = nullptr;
  if (auto e = cudaMalloc(&p, std::max<uint64_t>(bytes, 1)); e != cudaSuccess) return cuda_fail(e, "cudaMalloc", err, cap);
  *ptr = reinterpret_cast<uint64_t>(p);
  return 0;
}

__attribute__((visibility("default"))) int ptxbench_rp_free(uint64_t ptr) {
  return cudaFree(reinterpret_cast<void*>(ptr)) == cudaSuccess ? 0 : 1;
}

__attribute__((visibility("default"))) int ptxbench_rp_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, char* err, size_t cap) {
  if (auto e = cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes, cudaMemcpyDeviceToDevice);
      e != cudaSuccess)
    return cuda_fail(e, "cudaMemcpy", err, cap);
  return 0;
}

/// stream: a cudaStream_t as an integer (torch's stream.cuda_stream); 0 = the legacy default stream.
__attribute__((visibility("default"))) int ptxbench_rp_memset(uint64_t ptr, int value, uint64_t bytes, uint64_t stream,
                                                             char* err, size_t cap) {
  if (auto e = cudaMemsetAsync(reinterpret_cast<void*>(ptr), value, bytes, reinterpret_cast<cudaStream_t>(stream));
      e != cudaSuccess)
    return cuda_fail(e, "cudaMemsetAsync", err, cap);
  return 0;
}

/// Every stream of the process (not only the candidate's), then any error a kernel left.
__attribute__((visibility("default"))) int ptxbench_rp_synchronize(char* err, size_t cap) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, "the call", err, cap);
  return 0;
}

__attribute__((visibility("default"))) void ptxbench_rp_reset_persisting_l2() { cudaCtxResetPersistingL2Cache(); }

__attribute__((visibility("default"))) int ptxbench_rp_profiler_start() { return cudaProfilerStart() == cudaSuccess ? 0 : 1; }
__attribute__((visibility("default"))) int ptxbench_rp_profiler_stop() { return cudaProfilerStop() == cudaSuccess ? 0 : 1; }

/// Maps the shared go/done page the harness passed as an inherited descriptor (--sync-fd); sets
/// close-on-exec on it. 1 with the reason when it is not a sync page.
__attribute__((visibility("default"))) int ptxbench_rp_sync_attach(int fd, char* err, size_t cap) {
  auto page = ptxbench::sync_channel::attach(fd);
  if (!page) {
    put(page.err().message, err, cap);
    return 1;
  }
  g_sync = std::move(*page);
  return 0;
}

/// Waits until the harness writes go = seq (spin, then a shared futex), without a time limit, but
/// returns when liveness_fd (the socket to the harness) hangs up. 0 signalled, 1 timed out (not
/// with these options), 2 the harness is gone, 3 no page attached.
__attribute__((visibility("default"))) int ptxbench_rp_sync_wait_go(uint32_t seq, int liveness_fd) {
  if (!g_sync.valid()) return 3;
  ptxbench::sync_channel::wait_options o;
  o.liveness_fd = liveness_fd;
  switch (g_sync.wait_go(seq, o)) {
    case ptxbench::sync_channel::wait_result::signalled: return 0;
    case ptxbench::sync_channel::wait_result::timed_out: return 1;
    case ptxbench::sync_channel::wait_result::peer_gone: return 2;
  }
  return 2;
}

/// Publishes done = seq: the harness's clock stops here.
__attribute__((visibility("default"))) void ptxbench_rp_sync_signal_done(uint32_t seq) {
  if (g_sync.valid()) g_sync.signal_done(seq);
}

/// Capture mode (gpu/runner_py/graph_capture.h): starts a relaxed stream capture on `stream`.
__attribute__((visibility("default"))) int ptxbench_rp_capture_begin(uint64_t stream, char* err, size_t cap) {
  auto st = ptxbench::gpu::begin_stream_capture(stream);
  if (!st) return put(st.err().message, err, cap), 1;
  return 0;
}

/// Ends it; out: {"nodes": [...]} (return 0), the reason (return 1), or 2 when out is too small
/// (the capture is gone then: call with a buffer large enough, the caller starts at 16 MiB).
__attribute__((visibility("default"))) int ptxbench_rp_capture_end(uint64_t stream, char* out, size_t cap) {
  auto graph = ptxbench::gpu::end_stream_capture(stream);
  if (!graph) return put(graph.err().message, out, cap), 1;
  return put(graph->dump(), out, cap);
}

}  // extern "C"
