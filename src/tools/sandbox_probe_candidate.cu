// A stand-in for a candidate shared object, built like one (nvcc -shared --cudart shared): the
// sandbox probe dlopen()s it after the sandbox is applied, so its CUDA module is registered and
// (lazily) loaded under the sandbox, as a real candidate's is.
#include <cuda_runtime.h>

namespace {

__global__ void twice_plus_one(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 2.0f * p[i] + 1.0f;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const char* probe_candidate_launch(float* p, int n,
                                                                                   cudaStream_t stream) {
  twice_plus_one<<<(n + 255) / 256, 256, 0, stream>>>(p, n);
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}
