// PTXBench example: wrong_result.cu (task gemm_n7168_k5120, C[M,N] = A[M,K] * B[N,K]^T).
//
// Demonstrates: a kernel that builds, runs fast and writes every element of C, but computes the wrong
// thing: an off-by-one in the K loop drops the last 32-wide K tile, so each output misses 32 of its
// 5120 products (an error of several units on outputs of magnitude ~70, far outside atol=rtol=1e-2).
// Otherwise identical to plain_tiled.cu (cp.async + ldmatrix + mma.sync; no wgmma, no TMA).
//
// Expected PTXBench verdict: INCORRECT_NUMERICAL (target instructions absent_in_sass as well).
#include <ptxbench/abi.h>

#include <cuda_bf16.h>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 32;
constexpr int kStages = 3;
constexpr int kThreads = 256;             // 8 warps: 2 along M (64 rows each) x 4 along N (32 cols each)
constexpr int kRowElems = kBlockK + 8;    // padded smem row: 80 bytes, so ldmatrix rows hit distinct banks
constexpr int kTileElems = kBlockM * kRowElems;  // one operand, one stage (kBlockM == kBlockN)
constexpr size_t kSmemBytes = size_t(kStages) * 2 * kTileElems * sizeof(bf16);  // 61440

// ---- layout helpers (begin) ----
// Pure index math, checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
// ldmatrix.x4 row/column (within a 16x16 block) whose address lane `lane` supplies, for an A operand
// stored [m][k]: matrices 0..3 = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15),
// which are the mma.m16n8k16 A registers a0..a3.
__host__ __device__ constexpr int ldsm_a_row(int lane) { return lane % 16; }
__host__ __device__ constexpr int ldsm_a_col(int lane) { return (lane / 16) * 8; }
// For a B operand stored [n][k] (k contiguous), one ldmatrix.x4 (no .trans) yields the B registers of
// two n8 tiles: r0,r1 = (n 0-7, k 0-7 / 8-15), r2,r3 = (n 8-15, k 0-7 / 8-15).
__host__ __device__ constexpr int ldsm_b_row(int lane) { return (lane % 8) + (lane / 16) * 8; }
__host__ __device__ constexpr int ldsm_b_col(int lane) { return ((lane / 8) % 2) * 8; }
// mma.m16n8k16 accumulator c[i]: row and column inside the 16x8 tile.
__host__ __device__ constexpr int mma_c_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
__host__ __device__ constexpr int mma_c_col(int lane, int i) { return 2 * (lane % 4) + (i % 2); }
// ---- layout helpers (end) ----

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__global__ void __launch_bounds__(kThreads) gemm_mma_sync_kernel(const bf16* __restrict__ A, const bf16* __restrict__ B,
                                                                 bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* sA = reinterpret_cast<bf16*>(smem);  // [kStages][kBlockM][kRowElems]
  bf16* sB = sA + kStages * kTileElems;      // [kStages][kBlockN][kRowElems]

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / 4;  // 0..1
  const int warp_n = warp % 4;  // 0..3
  const int m0 = blockIdx.y * kBlockM;
  const int n0 = blockIdx.x * kBlockN;
  const int k_tiles = K / kBlockK - 1;  // BUG (deliberate): the last K tile is never accumulated

  // One stage: 128 rows x 4 chunks of 16 bytes per operand = 512 chunks, 2 per thread per operand.
  auto load_stage = [&](int stage, int kt) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = tid + i * kThreads;
      const int r = idx / 4, chunk = idx % 4;
      const bf16* ga = A + size_t(m0 + r) * K + size_t(kt) * kBlockK + chunk * 8;
      const bf16* gb = B + size_t(n0 + r) * K + size_t(kt) * kBlockK + chunk * 8;
      cp_async_16(smem_addr(sA + stage * kTileElems + r * kRowElems + chunk * 8), ga);
      cp_async_16(smem_addr(sB + stage * kTileElems + r * kRowElems + chunk * 8), gb);
    }
  };

  float acc[4][4][4];  // [m16 tile][n8 tile][fragment]
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();  // always commit so the group count stays uniform
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();               // ...everyone's have, and everyone finished reading tile kt-1
    const int prefetch = kt + kStages - 1;
    if (prefetch < k_tiles) load_stage(prefetch % kStages, prefetch);  // reuses the stage of tile kt-1
    cp_async_commit();

    const bf16* tA = sA + (kt % kStages) * kTileElems;
    const bf16* tB = sB + (kt % kStages) * kTileElems;
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 16) {
      uint32_t a_frag[4][4];
      uint32_t b_frag[4][2];
#pragma unroll
      for (int mt = 0; mt < 4; ++mt) {
        const int row = warp_m * 64 + mt * 16 + ldsm_a_row(lane);
        ldmatrix_x4(a_frag[mt], smem_addr(tA + row * kRowElems + kk + ldsm_a_col(lane)));
      }
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        const int row = warp_n * 32 + np * 16 + ldsm_b_row(lane);
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(tB + row * kRowElems + kk + ldsm_b_col(lane)));
        b_frag[2 * np][0] = r[0];
        b_frag[2 * np][1] = r[1];
        b_frag[2 * np + 1][0] = r[2];
        b_frag[2 * np + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) mma_16816(acc[mt][nt], a_frag[mt], b_frag[nt][0], b_frag[nt][1]);
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int mt = 0; mt < 4; ++mt) {
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      const int row = m0 + warp_m * 64 + mt * 16 + mma_c_row(lane, 0);
      const int col = n0 + warp_n * 32 + nt * 8 + mma_c_col(lane, 0);
      *reinterpret_cast<__nv_bfloat162*>(C + size_t(row) * N + col) =
          __floats2bfloat162_rn(acc[mt][nt][0], acc[mt][nt][1]);
      *reinterpret_cast<__nv_bfloat162*>(C + size_t(row + 8) * N + col) =
          __floats2bfloat162_rn(acc[mt][nt][2], acc[mt][nt][3]);
    }
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {
  if (A.ndim() != 2 || B.ndim() != 2 || C.ndim() != 2) throw ptxbench::abi_error("A, B and C must be 2-D");
  const int64_t M = A.size(0), K = A.size(1), N = B.size(0);
  if (B.size(1) != K || C.size(0) != M || C.size(1) != N) throw ptxbench::abi_error("shapes do not match C = A @ B.T");
  if (!A.is_contiguous() || !B.is_contiguous() || !C.is_contiguous())
    throw ptxbench::abi_error("A, B and C must be contiguous");
  if (M % kBlockM != 0 || N % kBlockN != 0 || K % kBlockK != 0 || M <= 0 || N <= 0 || K <= 0)
    throw ptxbench::abi_error("this kernel needs M % 128 == 0, N % 128 == 0 and K % 32 == 0");
  if (M / kBlockM > 65535) throw ptxbench::abi_error("M too large for the grid");

  check_cuda(cudaFuncSetAttribute(gemm_mma_sync_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
             "cudaFuncSetAttribute");
  const dim3 grid(unsigned(N / kBlockN), unsigned(M / kBlockM));
  gemm_mma_sync_kernel<<<grid, kThreads, kSmemBytes, stream>>>(A.data<bf16>(), B.data<bf16>(), C.data<bf16>(), int(M),
                                                              int(N), int(K));
  check_cuda(cudaGetLastError(), "launching gemm_mma_sync_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
