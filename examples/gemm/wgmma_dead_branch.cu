// PTXBench example: wgmma_dead_branch.cu (task gemm_n7168_k5120, C[M,N] = A[M,K] * B[N,K]^T).
//
// Demonstrates: wgmma that is in the binary but never runs on the workload. run() dispatches on M:
// a "small-batch" path (M <= 1024) launches a wgmma kernel (the kernel of wgmma.cu), every other M
// launches the Ampere-style mma.sync kernel of plain_tiled.cu. The headline workload has M = 8192, so
// only the mma.sync kernel executes: HGMMA is present in the SASS (a static check is satisfied) but its
// executed count is 0. This is why PTXBench counts target instructions at run time.
//
// Expected PTXBench verdict: PASSED (correct) but not target-correct: target instructions
// not_executed (GMMA in SASS, dynamic count 0).
#include <ptxbench/abi.h>

#include <cuda_bf16.h>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

// The large-M path: plain_tiled.cu's kernel.
namespace mma_path {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 32;
constexpr int kStages = 3;
constexpr int kThreads = 256;             // 8 warps: 2 along M (64 rows each) x 4 along N (32 cols each)
constexpr int kRowElems = kBlockK + 8;    // padded smem row: 80 bytes, so ldmatrix rows hit distinct banks
constexpr int kTileElems = kBlockM * kRowElems;  // one operand, one stage (kBlockM == kBlockN)
constexpr size_t kSmemBytes = size_t(kStages) * 2 * kTileElems * sizeof(bf16);  // 61440

// ---- layout helpers (same as plain_tiled.cu) ----
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
  const int k_tiles = K / kBlockK;

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

}  // namespace mma_path

// The small-M path: wgmma.cu's kernel. Never taken at M = 8192.
namespace wgmma_path {

constexpr int kBlockM = 128;  // two warpgroups x m64
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;   // one 128-byte swizzle atom of bf16 per row
constexpr int kThreads = 256;
constexpr uint32_t kTileBytesA = kBlockM * kBlockK * 2;  // 16 KiB
constexpr uint32_t kTileBytesB = kBlockN * kBlockK * 2;  // 16 KiB
constexpr size_t kSmemBytes = kTileBytesA + kTileBytesB + 1024;  // + slack to align the tiles to 1024 B
static_assert(kTileBytesA == 16384, "b_desc_offset assumes a 16 KiB A tile");

// ---- layout helpers (same as wgmma.cu) ----
// Pure index math, checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
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

}  // namespace wgmma_path

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
  if (M <= 0 || N <= 0 || K <= 0 || M % 128 != 0 || N % 128 != 0 || K % 64 != 0)
    throw ptxbench::abi_error("this kernel needs M % 128 == 0, N % 128 == 0 and K % 64 == 0");
  if (M / 128 > 65535) throw ptxbench::abi_error("M too large for the grid");

  const dim3 grid(unsigned(N / 128), unsigned(M / 128));
  if (M <= 1024) {
    // "Small batch": use the tensor-core warpgroup kernel.
    using namespace wgmma_path;
    check_cuda(cudaFuncSetAttribute(gemm_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
               "cudaFuncSetAttribute");
    gemm_wgmma_kernel<<<grid, kThreads, kSmemBytes, stream>>>(A.data<bf16>(), B.data<bf16>(), C.data<bf16>(), int(M),
                                                             int(N), int(K));
    check_cuda(cudaGetLastError(), "launching gemm_wgmma_kernel");
  } else {
    using namespace mma_path;
    check_cuda(cudaFuncSetAttribute(gemm_mma_sync_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
               "cudaFuncSetAttribute");
    gemm_mma_sync_kernel<<<grid, kThreads, kSmemBytes, stream>>>(A.data<bf16>(), B.data<bf16>(), C.data<bf16>(),
                                                                int(M), int(N), int(K));
    check_cuda(cudaGetLastError(), "launching gemm_mma_sync_kernel");
  }
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
