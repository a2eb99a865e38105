// PTXBench example: an upstream PTXBench kernel, unchanged (task gemm_n7168_k5120,
// C[M,N] = A[M,K] * B[N,K]^T, bf16 in/out, fp32 accumulation).
//
// Written in upstream's TVM-FFI form: tvm::ffi::TensorView arguments, cudaSetDevice on the tensor's
// device, the stream from TVMFFIEnvGetStream, CUDA_CHECK after the launch, a stream synchronise, and
// TVM_FFI_DLL_EXPORT_TYPED_FUNC inside the namespace. PTXBench builds it against its TVM-FFI
// compatibility headers when the Solution says "binding": "tvm-ffi" (gemm_tvm_ffi_plain.json).
//
// Demonstrates: a plain shared-memory tiled GEMM on CUDA cores; no tensor-core instructions.
// Expected PTXBench verdict: PASSED, target instructions absent_in_sass (no GMMA, no TMA).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <device_launch_parameters.h>
#include <cuda.h>
#include <cstdint>
#include <stdio.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/tvm_ffi.h>

#define CUDA_CHECK(call)                                                                      \
  do {                                                                                        \
    cudaError_t err_ = (call);                                                                \
    if (err_ != cudaSuccess) {                                                                \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

namespace gemm_plain_tvm_ffi {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 32;
constexpr int kThreads = 256;  // 16 x 16 threads, each 4 x 4 outputs

// Each block computes a 64x64 tile of C. A and B tiles are staged in shared memory as fp32, K-major,
// so a thread's four A values are one broadcast and its four B values are conflict-free.
__global__ void __launch_bounds__(kThreads) gemm_tiled_kernel(const __nv_bfloat16* __restrict__ A,
                                                              const __nv_bfloat16* __restrict__ B,
                                                              __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kTileK][kTileM + 1];
  __shared__ float Bs[kTileK][kTileN + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTileM, n0 = blockIdx.x * kTileN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTileM * kTileK; i += kThreads) {
      const int r = i / kTileK, c = i % kTileK;
      const int gk = k0 + c;
      const int gm = m0 + r, gn = n0 + r;
      As[c][r] = (gm < M && gk < K) ? __bfloat162float(A[(size_t)gm * K + gk]) : 0.f;
      Bs[c][r] = (gn < N && gk < K) ? __bfloat162float(B[(size_t)gn * K + gk]) : 0.f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = As[kk][ty + 16 * i];
        b[i] = Bs[kk][tx + 16 * i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int m = m0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int n = n0 + tx + 16 * j;
      if (m < M && n < N) C[(size_t)m * N + n] = __float2bfloat16(acc[i][j]);
    }
  }
}

void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  CUDA_CHECK(cudaSetDevice(A.device().device_id));
  int64_t M = A.size(0);
  int64_t K = A.size(1);
  int64_t N = B.size(0);
  TVM_FFI_ICHECK(B.size(1) == K && C.size(0) == M && C.size(1) == N) << "shapes do not match C = A @ B.T";
  if (M == 0 || N == 0 || K == 0) return;

  const __nv_bfloat16* a_ptr = static_cast<const __nv_bfloat16*>(A.data_ptr());
  const __nv_bfloat16* b_ptr = static_cast<const __nv_bfloat16*>(B.data_ptr());
  __nv_bfloat16* c_ptr = static_cast<__nv_bfloat16*>(C.data_ptr());

  cudaStream_t stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(A.device().device_type, A.device().device_id));
  dim3 grid((unsigned)((N + kTileN - 1) / kTileN), (unsigned)((M + kTileM - 1) / kTileM));
  gemm_tiled_kernel<<<grid, kThreads, 0, stream>>>(a_ptr, b_ptr, c_ptr, (int)M, (int)N, (int)K);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, gemm_plain_tvm_ffi::run);

}  // namespace gemm_plain_tvm_ffi
