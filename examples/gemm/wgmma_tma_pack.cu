// GEMM candidate for task gemm_n7168_k5120: C[M,N] = A[M,K] * B[N,K]^T, bf16 in and out, fp32
// accumulation. It #includes the sm90a knowledge pack's wrappers instead of pasting them
// (the candidate build adds -I packs/common/include -I packs/sm90a/include).
//
// Design: one 128x256 output tile per CTA; 3 warpgroups. Warpgroup 0 is the producer: one thread
// issues TMA loads (128B swizzle) of a 128x64 A tile and a 256x64 B tile per stage into a
// 4-stage ring guarded by full/empty mbarriers. Warpgroups 1 and 2 each own 64 rows and issue
// wgmma m64n256k16 (both operands from shared memory), keeping one wgmma group in flight. The
// epilogue converts to bf16 with stmatrix into swizzled smem and stores with TMA.
#include <ptxbench/abi.h>
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>
#include <ptxkit/wgmma.cuh>

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kConsumers = 2, kGroupM = 16;
constexpr uint32_t kABytes = kBM * kBK * 2;  // one A stage: 128 rows x 128 B
constexpr uint32_t kBBytes = kBN * kBK * 2;  // one B stage: 256 rows x 128 B
constexpr uint32_t kStageBytes = kABytes + kBBytes;
constexpr uint32_t kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;  // + barriers + alignment slack

__global__ void __launch_bounds__(384, 1)
gemm_kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
            const __grid_constant__ CUtensorMap tma_c, int M, int N, int K) {
  using namespace ptxkit;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageBytes);
  uint64_t* empty = full + kStages;
  auto a_tile = [&](uint32_t s) { return smem + s * kStageBytes; };
  auto b_tile = [&](uint32_t s) { return smem + s * kStageBytes + kABytes; };

  // Grouped rasterisation: kGroupM consecutive M tiles share each N tile while they are resident.
  const int num_m = (M + kBM - 1) / kBM, num_n = (N + kBN - 1) / kBN;
  const int per_group = kGroupM * num_n, group = blockIdx.x / per_group;
  const int first_m = group * kGroupM, group_rows = min(num_m - first_m, kGroupM);
  const int m_blk = first_m + (blockIdx.x % per_group) % group_rows;
  const int n_blk = (blockIdx.x % per_group) / group_rows;
  const int m0 = m_blk * kBM, n0 = n_blk * kBN, k_tiles = (K + kBK - 1) / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);                   // the producer's arrive_expect_tx
      mbar_init(&empty[s], kConsumers * 4);     // one arrival per consumer warp
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  const uint32_t wg = warpgroup_id();
  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tma_a);
      prefetch_tensormap(&tma_b);
      ring_pos<kStages> pos;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(&empty[pos.index], pos.phase ^ 1);  // first pass: parity 1 of a fresh barrier is "done"
        mbar_arrive_expect_tx(&full[pos.index], kStageBytes);
        tma_load_2d(a_tile(pos.index), &tma_a, &full[pos.index], kt * kBK, m0);
        tma_load_2d(b_tile(pos.index), &tma_b, &full[pos.index], kt * kBK, n0);
        pos.advance();
      }
    }
    return;
  }

  setmaxnreg_inc<232>();
  float acc[kBN / 2];
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;
  const uint32_t row_off = (wg - 1) * 64 * 128;  // this warpgroup's 64 rows inside the A tile
  const bool warp_leader = threadIdx.x % 32 == 0;
  ring_pos<kStages> pos;
  uint32_t prev = 0;
  for (int kt = 0; kt < k_tiles; ++kt) {
    mbar_wait(&full[pos.index], pos.phase);
    const uint64_t da = make_desc_k_major<swizzle::b128>(a_tile(pos.index) + row_off);
    const uint64_t db = make_desc_k_major<swizzle::b128>(b_tile(pos.index));
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk)
      wgmma_m64n256k16_ss(acc, desc_advance(da, kk * 32), desc_advance(db, kk * 32), 1);
    wgmma_commit();
    wgmma_wait<1>();  // the previous stage's wgmmas are done: release that slot
    if (kt > 0 && warp_leader) mbar_arrive(&empty[prev]);
    prev = pos.index;
    pos.advance();
  }
  wgmma_wait<0>();
  fence_regs(acc);

  // Epilogue: both consumers must be done reading the ring before it is reused as staging.
  named_barrier_sync<kConsumers * 128>(1);
  uint8_t* stage_c = smem + (wg - 1) * (64 * kBN * 2);  // 64 x 256 bf16 = 4 blocks of 64x64 (8 KB)
  stmatrix_acc_bf16<kBN, swizzle::b128>(acc, stage_c);
  fence_proxy_async_smem();
  named_barrier_sync<128>(1 + wg);
  if (threadIdx.x % 128 == 0) {
    for (int b = 0; b < kBN / 64; ++b)
      tma_store_2d(&tma_c, stage_c + b * 64 * 128, n0 + b * 64, m0 + (wg - 1) * 64);
    bulk_commit_group();
    bulk_wait_group<0>();
  }
}

}  // namespace

void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {
  const int M = static_cast<int>(A.size(0)), K = static_cast<int>(A.size(1)), N = static_cast<int>(B.size(0));
  if (B.size(1) != K || C.size(0) != M || C.size(1) != N) throw ptxbench::shape_error("shape mismatch");
  if (!A.is_contiguous() || !B.is_contiguous() || !C.is_contiguous() || K % 8 != 0 || N % 8 != 0)
    throw ptxbench::shape_error("needs contiguous tensors with K and N multiples of 8 (TMA strides are 16-byte units)");
  using ptxkit::swizzle;
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(A.data_ptr(), M, K, K, kBM, kBK, swizzle::b128);
  const CUtensorMap tb = ptxkit::make_tma_2d_bf16(B.data_ptr(), N, K, K, kBN, kBK, swizzle::b128);
  const CUtensorMap tc = ptxkit::make_tma_2d_bf16(C.data_ptr(), M, N, N, 64, 64, swizzle::b128);
  static const cudaError_t configured =
      cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  if (configured != cudaSuccess)
    throw ptxbench::abi_error(std::string("cannot enable the kernel's dynamic shared memory (" + std::to_string(kSmemBytes) + " bytes): ") + cudaGetErrorString(configured));
  const int tiles = ((M + kBM - 1) / kBM) * ((N + kBN - 1) / kBN);
  gemm_kernel<<<tiles, 384, kSmemBytes, stream>>>(ta, tb, tc, M, N, K);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw ptxbench::abi_error(std::string("launch failed: ") + cudaGetErrorString(err));
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
