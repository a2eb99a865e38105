// out[i] = alpha * x[i] + y[i] for bf16 vectors: shows only the ABI (includes, host entry point,
// checks, launch on the given stream, export line). A task's kernel replaces all of this.
#include <ptxbench/abi.h>

#include <cuda_bf16.h>

__global__ void axpy_kernel(const __nv_bfloat16* x, const __nv_bfloat16* y, __nv_bfloat16* out, float alpha, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(alpha * __bfloat162float(x[i]) + __bfloat162float(y[i]));
}

// Inputs first, then outputs, in the order of the task definition; then the stream.
void run(ptxbench::tensor_view x, ptxbench::tensor_view y, ptxbench::tensor_view alpha, ptxbench::tensor_view out,
         cudaStream_t stream) {
  if (x.numel() != y.numel() || x.numel() != out.numel()) throw ptxbench::abi_error("x, y and out differ in size");
  const int64_t n = x.numel();
  const float a = alpha.scalar<float>();  // a scalar input (shape null): its value is on the host
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  axpy_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x.data<__nv_bfloat16>(), y.data<__nv_bfloat16>(),
                                                                   out.data<__nv_bfloat16>(), a, n);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) throw ptxbench::abi_error(cudaGetErrorString(e));
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT32, PTXBENCH_BFLOAT16)
