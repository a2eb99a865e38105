#include "gpu/runner/marker_kernel.h"

namespace ptxbench::gpu {
namespace {

__global__ void ptxbench_runner_marker() {}

}  // namespace

cudaError_t launch_marker_kernel(cudaStream_t stream) {
  // cudaLaunchKernel by name, not <<<>>>: the launch callback it must trigger is then a fixed one
  // (cudaLaunchKernel), whatever path the compiler's launch stubs take.
  return cudaLaunchKernel(reinterpret_cast<const void*>(&ptxbench_runner_marker), dim3(1), dim3(1), nullptr, 0, stream);
}

}  // namespace ptxbench::gpu
