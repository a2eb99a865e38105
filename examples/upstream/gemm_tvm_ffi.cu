// PTXBench example: an upstream PTXBench kernel, unchanged (task gemm_n7168_k5120,
// C[M,N] = A[M,K] * B[N,K]^T, bf16 in/out, fp32 accumulation).
//
// Written in upstream's TVM-FFI form: tvm::ffi::TensorView arguments, cudaSetDevice on the tensor's
// device, the stream from TVMFFIEnvGetStream, CUDA_CHECK after the launch, a stream synchronise, and
// TVM_FFI_DLL_EXPORT_TYPED_FUNC inside the namespace. PTXBench builds it against its TVM-FFI
// compatibility headers when the Solution says "binding": "tvm-ffi" (gemm_tvm_ffi.json), with no
// edit and no libtvm_ffi.
//
// Demonstrates: the device code of examples/gemm/wgmma.cu (two warpgroups per 128x128 tile,
// 128-byte-swizzled shared memory filled with ordinary loads, fence.proxy.async, four
// wgmma.mma_async.m64n128k16 per 64-wide K step) behind upstream's host interface.
// Expected PTXBench verdict: PASSED, target instructions executed (GMMA; no TMA).
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

namespace gemm_wgmma_tvm_ffi {

using bf16 = __nv_bfloat16;

constexpr int kBlockM = 128;  // two warpgroups x m64
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;   // one 128-byte swizzle atom of bf16 per row
constexpr int kThreads = 256;
constexpr uint32_t kTileBytesA = kBlockM * kBlockK * 2;  // 16 KiB
constexpr uint32_t kTileBytesB = kBlockN * kBlockK * 2;  // 16 KiB
constexpr size_t kSmemBytes = kTileBytesA + kTileBytesB + 1024;  // + slack to align the tiles to 1024 B
static_assert(kTileBytesA == 16384, "b_desc_offset assumes a 16 KiB A tile");

// ---- layout helpers (begin) ----
// Pure index math, identical to examples/gemm/wgmma.cu (whose copy bench/eval/kernel_selftest/layout_check.cc checks).
// Byte offset of element (r, c), c in [0, 64), of a [rows][64] bf16 tile in the 128-byte-swizzle
// layout (the layout TMA's CU_TENSOR_MAP_SWIZZLE_128B writes): 16-byte chunk index XOR (row % 8).
// The tile must start at a 1024-byte-aligned shared address.
__host__ __device__ constexpr uint32_t sw128_offset(int r, int c) {
  return uint32_t(r) * 128u + (uint32_t(((c >> 3) ^ r) & 7) << 4) + uint32_t(c & 7) * 2u;
}
// wgmma shared-memory descriptor for a K-major operand in the 128-byte-swizzle layout: start address,
// LBO = 16 B (unused for this layout), SBO = 1024 B (one 8-row x 128 B swizzle atom), swizzle mode 1.
__host__ __device__ constexpr uint64_t make_sw128_desc(uint32_t smem_byte_addr) {
  return uint64_t((smem_byte_addr & 0x3FFFFu) >> 4) | (uint64_t(16u >> 4) << 16) | (uint64_t(1024u >> 4) << 32) |
         (uint64_t(1) << 62);
}
// Row and column of fp32 accumulator element i of thread `t` (0..127) of a warpgroup, wgmma m64nN.
__host__ __device__ constexpr int wg_acc_row(int t, int i) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i / 2) % 2); }
__host__ __device__ constexpr int wg_acc_col(int t, int i) { return (i / 4) * 8 + 2 * (t % 4) + (i % 2); }
// Descriptor start offsets (bytes from the aligned smem base) for k16 step kk: A tile [128][64] at 0,
// this warpgroup's 64 rows start at row 64 * wg; B tile [128][64] at 16384. A k16 step is +32 bytes.
__host__ __device__ constexpr uint32_t a_desc_offset(int wg, int kk) { return uint32_t(wg) * 64u * 128u + uint32_t(kk) * 32u; }
__host__ __device__ constexpr uint32_t b_desc_offset(int kk) { return 16384u + uint32_t(kk) * 32u; }
// ---- layout helpers (end) ----

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads or writes of accumulator registers across a wgmma wait.
template <int N>
__device__ __forceinline__ void fence_operands(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D[64x128] (+)= A[64x16] * B[16x128]; A and B from shared memory (K-major, descriptors).
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__global__ void __launch_bounds__(kThreads) gemm_wgmma_kernel(const bf16* __restrict__ A, const bf16* __restrict__ B,
                                                              bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // swizzle atoms must be 1024-byte aligned
  unsigned char* tile_a = smem_raw + (base - raw);
  unsigned char* tile_b = tile_a + kTileBytesA;

  const int tid = threadIdx.x;
  const int wg = tid / 128;   // warpgroup: rows wg*64 .. wg*64+63 of the block tile
  const int t = tid % 128;    // thread within the warpgroup
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;
  const int k_tiles = K / kBlockK;

  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = 0.f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    __syncthreads();  // every warpgroup has waited for its wgmmas on the previous tiles
    // 128 rows x 8 chunks of 16 bytes per operand: 1024 chunks, 4 per thread per operand.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int idx = tid + i * kThreads;
      const int r = idx / 8, chunk = idx % 8;
      const size_t k_off = size_t(kt) * kBlockK + chunk * 8;
      const uint4 va = *reinterpret_cast<const uint4*>(A + size_t(m0 + r) * K + k_off);
      const uint4 vb = *reinterpret_cast<const uint4*>(B + size_t(n0 + r) * K + k_off);
      *reinterpret_cast<uint4*>(tile_a + sw128_offset(r, chunk * 8)) = va;
      *reinterpret_cast<uint4*>(tile_b + sw128_offset(r, chunk * 8)) = vb;
    }
    fence_proxy_async_shared();  // make the generic-proxy stores visible to wgmma (async proxy)
    __syncthreads();

    fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      // A: this warpgroup's 64 rows; B: all 128 rows. A K step of 16 bf16 is +32 bytes inside the atom.
      const uint64_t da = make_sw128_desc(base + a_desc_offset(wg, kk));
      const uint64_t db = make_sw128_desc(base + b_desc_offset(kk));
      wgmma_m64n128k16_ss(acc, da, db, 1);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_operands(acc);
  }

  const int row0 = m0 + wg * 64;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int row = row0 + wg_acc_row(t, 4 * j);
    const int col = n0 + wg_acc_col(t, 4 * j);
    *reinterpret_cast<__nv_bfloat162*>(C + size_t(row) * N + col) = __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
    *reinterpret_cast<__nv_bfloat162*>(C + size_t(row + 8) * N + col) =
        __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
  }
}

void run(tvm::ffi::TensorView A, tvm::ffi::TensorView B, tvm::ffi::TensorView C) {
  CUDA_CHECK(cudaSetDevice(A.device().device_id));
  int64_t M = A.size(0);
  int64_t K = A.size(1);
  int64_t N = B.size(0);
  TVM_FFI_ICHECK(A.ndim() == 2 && B.ndim() == 2 && C.ndim() == 2) << "A, B and C must be 2-D";
  TVM_FFI_ICHECK(B.size(1) == K && C.size(0) == M && C.size(1) == N) << "shapes do not match C = A @ B.T";
  TVM_FFI_ICHECK(M % kBlockM == 0 && N % kBlockN == 0 && K % kBlockK == 0 && M / kBlockM <= 65535)
      << "this kernel needs M % 128 == 0, N % 128 == 0 and K % 64 == 0";
  if (M == 0 || N == 0 || K == 0) return;

  const bf16* a_ptr = static_cast<const bf16*>(A.data_ptr());
  const bf16* b_ptr = static_cast<const bf16*>(B.data_ptr());
  bf16* c_ptr = static_cast<bf16*>(C.data_ptr());

  cudaStream_t stream = static_cast<cudaStream_t>(TVMFFIEnvGetStream(A.device().device_type, A.device().device_id));
  CUDA_CHECK(cudaFuncSetAttribute(gemm_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)));
  const dim3 grid(unsigned(N / kBlockN), unsigned(M / kBlockM));
  gemm_wgmma_kernel<<<grid, kThreads, kSmemBytes, stream>>>(a_ptr, b_ptr, c_ptr, int(M), int(N), int(K));
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, gemm_wgmma_tvm_ffi::run);

}  // namespace gemm_wgmma_tvm_ffi
