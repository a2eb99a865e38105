// PTXBench example: wgmma_tma_pipelined.cu (task gemm_n7168_k5120, C[M,N] = A[M,K] * B[N,K]^T, bf16
// in/out, fp32 accumulation).
//
// Demonstrates: the Hopper way. Each block computes a 128x256 tile of C with three warpgroups:
//  - warpgroup 0 is the producer: one thread issues TMA loads (cp.async.bulk.tensor.2d, tensor maps
//    with CU_TENSOR_MAP_SWIZZLE_128B, encoded on the host with cuTensorMapEncodeTiled obtained through
//    cudaGetDriverEntryPointByVersion, passed as __grid_constant__ CUtensorMap) into a 4-stage ring of
//    shared-memory buffers, signalling "full" mbarriers through transaction counts;
//  - warpgroups 1 and 2 are consumers: each waits on the stage's "full" mbarrier, issues four
//    wgmma.mma_async.m64n256k16 (bf16 -> f32) on its 64 rows, keeps one wgmma group in flight
//    (wait_group 1) and releases the previous stage through its "empty" mbarrier.
// Tiles are visited in groups of 8 block-rows so that concurrently running blocks share A and B in L2.
//
// Expected PTXBench verdict: PASSED, target instructions executed (GMMA and TMA both executed),
// clearly faster than wgmma.cu (roughly 0.6-0.8x of cuBLAS at the headline shape).
#include <ptxbench/abi.h>

#include <cuda.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kBlockM = 128;  // two consumer warpgroups x m64
constexpr int kBlockN = 256;
constexpr int kBlockK = 64;   // one 128-byte swizzle atom of bf16 per row
constexpr int kStages = 4;
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kGroupM = 8;     // block-rows per rasterisation group
constexpr uint32_t kStageBytesA = kBlockM * kBlockK * 2;  // 16 KiB
constexpr uint32_t kStageBytesB = kBlockN * kBlockK * 2;  // 32 KiB
constexpr uint32_t kBarrierOffset = kStages * (kStageBytesA + kStageBytesB);  // 192 KiB
constexpr size_t kSmemBytes = kBarrierOffset + 2 * kStages * sizeof(uint64_t) + 1024;  // + alignment slack
constexpr int kConsumerWarps = 8;  // each consumer warp arrives once on an "empty" barrier
static_assert(kStages == 4 && kStageBytesA == 16384 && kStageBytesB == 32768, "stage offsets below assume these sizes");

// ---- layout helpers (begin) ----
// Pure index math, checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
// wgmma shared-memory descriptor for a K-major operand in the 128-byte-swizzle layout (what TMA writes
// with CU_TENSOR_MAP_SWIZZLE_128B and a 64-element bf16 inner box): start address, LBO = 16 B (unused
// for this layout), SBO = 1024 B (one 8-row x 128 B swizzle atom), swizzle mode 1 (128 B).
__host__ __device__ constexpr uint64_t make_sw128_desc(uint32_t smem_byte_addr) {
  return uint64_t((smem_byte_addr & 0x3FFFFu) >> 4) | (uint64_t(16u >> 4) << 16) | (uint64_t(1024u >> 4) << 32) |
         (uint64_t(1) << 62);
}
// Row and column of fp32 accumulator element i of thread `t` (0..127) of a warpgroup, wgmma m64nN.
__host__ __device__ constexpr int wg_acc_row(int t, int i) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i / 2) % 2); }
__host__ __device__ constexpr int wg_acc_col(int t, int i) { return (i / 4) * 8 + 2 * (t % 4) + (i % 2); }
// Shared-memory byte offsets from the aligned base: stage s of A ([128][64] bf16, 16 KiB) and of B
// ([256][64] bf16, 32 KiB), where TMA writes; descriptor start of consumer warpgroup cw's 64 rows of A
// and of all of B for k16 step kk (+32 bytes per step inside the 128-byte swizzled rows).
__host__ __device__ constexpr uint32_t stage_a_offset(int s) { return uint32_t(s) * 16384u; }
__host__ __device__ constexpr uint32_t stage_b_offset(int s) { return 4u * 16384u + uint32_t(s) * 32768u; }
__host__ __device__ constexpr uint32_t a_desc_offset(int s, int cw, int kk) {
  return stage_a_offset(s) + uint32_t(cw) * 64u * 128u + uint32_t(kk) * 32u;
}
__host__ __device__ constexpr uint32_t b_desc_offset(int s, int kk) { return stage_b_offset(s) + uint32_t(kk) * 32u; }
// Block id -> (tile row, tile column): groups of `group_m` tile rows are walked column by column, so
// the blocks running at the same time share a few A row-panels and B column-panels in L2.
__host__ __device__ constexpr int grouped_rows(int bid, int tiles_m, int tiles_n, int group_m) {
  return (tiles_m - (bid / (group_m * tiles_n)) * group_m) < group_m ? tiles_m - (bid / (group_m * tiles_n)) * group_m
                                                                      : group_m;
}
__host__ __device__ constexpr int grouped_tile_m(int bid, int tiles_m, int tiles_n, int group_m) {
  return (bid / (group_m * tiles_n)) * group_m + (bid % (group_m * tiles_n)) % grouped_rows(bid, tiles_m, tiles_n, group_m);
}
__host__ __device__ constexpr int grouped_tile_n(int bid, int tiles_m, int tiles_n, int group_m) {
  return (bid % (group_m * tiles_n)) / grouped_rows(bid, tiles_m, tiles_n, group_m);
}
// ---- layout helpers (end) ----

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// --- mbarrier ---
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase with parity `parity` has completed. A freshly initialised barrier is in phase 0,
// so waiting for parity 1 returns at once (the "previous" phase counts as complete).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

// --- TMA ---
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int c_inner, int c_outer,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c_inner), "r"(c_outer), "r"(bar)
      : "memory");
}

// --- wgmma ---
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

// D[64x256] (+)= A[64x16] * B[16x256]; A and B from shared memory (K-major, descriptors).
__device__ __forceinline__ void wgmma_m64n256k16_ss(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_tma_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                          bf16* __restrict__ C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;  // TMA 128B swizzle and wgmma atoms need 1024-byte alignment
  const uint32_t full_bar = base + kBarrierOffset;            // kStages x uint64
  const uint32_t empty_bar = full_bar + kStages * 8;          // kStages x uint64

  const int tid = threadIdx.x;
  const int wg = tid / 128;
  const int t = tid % 128;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bar + 8 * s, 1);                 // the producer's arrive.expect_tx
      mbar_init(empty_bar + 8 * s, kConsumerWarps);   // one arrive per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  const int tiles_m = M / kBlockM, tiles_n = N / kBlockN;
  const int bid = blockIdx.x;
  const int m_tile = grouped_tile_m(bid, tiles_m, tiles_n, kGroupM);
  const int n_tile = grouped_tile_n(bid, tiles_m, tiles_n, kGroupM);
  const int k_tiles = K / kBlockK;

  if (wg == 0) {
    // Producer: a single thread drives the TMA unit; the rest of the warpgroup has nothing to do.
    if (t == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % kStages;
        const uint32_t round = uint32_t(kt / kStages);
        mbar_wait(empty_bar + 8 * s, (round & 1u) ^ 1u);  // consumers released this stage (free in round 0)
        mbar_arrive_expect_tx(full_bar + 8 * s, kStageBytesA + kStageBytesB);
        tma_load_2d(base + stage_a_offset(s), &map_a, kt * kBlockK, m_tile * kBlockM, full_bar + 8 * s);
        tma_load_2d(base + stage_b_offset(s), &map_b, kt * kBlockK, n_tile * kBlockN, full_bar + 8 * s);
      }
    }
    return;
  }

  // Consumers: warpgroup cw owns rows cw*64 .. cw*64+63 of the block tile.
  const int cw = wg - 1;
  const int lane = tid % 32;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(full_bar + 8 * s, uint32_t(kt / kStages) & 1u);  // TMA bytes of this stage have landed
    fence_operands(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk) {
      const uint64_t da = make_sw128_desc(base + a_desc_offset(s, cw, kk));
      const uint64_t db = make_sw128_desc(base + b_desc_offset(s, kk));
      wgmma_m64n256k16_ss(acc, da, db, 1);
    }
    wgmma_commit();
    wgmma_wait<1>();  // the group of tile kt-1 is complete, so its stage can be refilled
    fence_operands(acc);
    if (kt > 0) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty_bar + 8 * ((kt - 1) % kStages));
    }
  }
  wgmma_wait<0>();
  fence_operands(acc);

  const int row0 = m_tile * kBlockM + cw * 64;
  const int col0 = n_tile * kBlockN;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int row = row0 + wg_acc_row(t, 4 * j);
    const int col = col0 + wg_acc_col(t, 4 * j);
    *reinterpret_cast<__nv_bfloat162*>(C + size_t(row) * N + col) = __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
    *reinterpret_cast<__nv_bfloat162*>(C + size_t(row + 8) * N + col) =
        __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver entry point, looked up once through the runtime so the library needs no libcuda link.
encode_tiled_fn encode_tiled() {
  static const encode_tiled_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status);
    return (e == cudaSuccess && status == cudaDriverEntryPointSuccess) ? reinterpret_cast<encode_tiled_fn>(p) : nullptr;
  }();
  if (fn == nullptr) throw ptxbench::abi_error("cuTensorMapEncodeTiled is not available from the driver");
  return fn;
}

// A row-major [rows][cols] bf16 matrix, loaded in boxes of box_rows x 64 columns with the 128-byte swizzle.
CUtensorMap make_tensor_map(const void* ptr, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * sizeof(bf16)};
  const cuuint32_t box[2] = {uint32_t(kBlockK), box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(ptr), dims, strides, box,
                                    elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw ptxbench::abi_error("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(r)));
  return map;
}

}  // namespace

void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {
  if (A.ndim() != 2 || B.ndim() != 2 || C.ndim() != 2) throw ptxbench::abi_error("A, B and C must be 2-D");
  const int64_t M = A.size(0), K = A.size(1), N = B.size(0);
  if (B.size(1) != K || C.size(0) != M || C.size(1) != N) throw ptxbench::abi_error("shapes do not match C = A @ B.T");
  if (!A.is_contiguous() || !B.is_contiguous() || !C.is_contiguous())
    throw ptxbench::abi_error("A, B and C must be contiguous");
  if (M <= 0 || N <= 0 || K <= 0 || M % kBlockM != 0 || N % kBlockN != 0 || K % kBlockK != 0)
    throw ptxbench::abi_error("this kernel needs M % 128 == 0, N % 256 == 0 and K % 64 == 0");
  if ((M / kBlockM) * (N / kBlockN) > 2147483647LL) throw ptxbench::abi_error("too many tiles");

  // Encoded on every call: the harness passes fresh pointers, and encoding costs microseconds.
  const CUtensorMap map_a = make_tensor_map(A.data_ptr(), uint64_t(M), uint64_t(K), kBlockM);
  const CUtensorMap map_b = make_tensor_map(B.data_ptr(), uint64_t(N), uint64_t(K), kBlockN);

  check_cuda(cudaFuncSetAttribute(gemm_tma_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
             "cudaFuncSetAttribute");
  const unsigned blocks = unsigned((M / kBlockM) * (N / kBlockN));
  gemm_tma_wgmma_kernel<<<blocks, kThreads, kSmemBytes, stream>>>(map_a, map_b, C.data<bf16>(), int(M), int(N), int(K));
  check_cuda(cudaGetLastError(), "launching gemm_tma_wgmma_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
