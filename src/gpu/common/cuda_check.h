#pragma once
// Call-site checks for CUDA runtime and driver calls in trusted harness code: a failure throws
// std::runtime_error naming the call, the file:line and the CUDA error, so a broken harness step is
// reported as an infrastructure error with evidence, never silently ignored.

#include <cuda.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ptxbench::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

[[noreturn]] inline void throw_driver_error(CUresult r, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           (name ? name : "CUDA_ERROR") + " (" + (text ? text : "?") + ")");
}

}  // namespace ptxbench::gpu

#define PTXB_CUDA_CALL(call)                                                         \
  do {                                                                               \
    cudaError_t ptxb_err_ = (call);                                                  \
    if (ptxb_err_ != cudaSuccess) {                                                  \
      (void)cudaGetLastError();                                                      \
      ::ptxbench::gpu::throw_cuda_error(ptxb_err_, #call, __FILE__, __LINE__);       \
    }                                                                                \
  } while (0)

#define PTXB_DRIVER_CALL(call)                                                       \
  do {                                                                               \
    CUresult ptxb_res_ = (call);                                                     \
    if (ptxb_res_ != CUDA_SUCCESS) ::ptxbench::gpu::throw_driver_error(ptxb_res_, #call, __FILE__, __LINE__); \
  } while (0)

/// For destructors: report and continue, never throw.
#define PTXB_CUDA_CALL_NOEXCEPT(call)                                                \
  do {                                                                               \
    cudaError_t ptxb_err_ = (call);                                                  \
    if (ptxb_err_ != cudaSuccess) (void)cudaGetLastError();                          \
  } while (0)
