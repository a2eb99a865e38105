// Reference kernel (issue 30) for task gemm_n7168_k5120: C[M,N] = A[M,K] * B[N,K]^T, bf16 in and
// out, fp32 accumulation. Written only with #includes of the sm90a knowledge pack (ptxkit/*.cuh) and
// <ptxbench/abi.h>, like examples/gemm/wgmma_tma_pack.cu (0.975x cuBLASLt on an H100 in the same run),
// which it extends. It needed one wrapper the pack lacked, mbar_arrive_remote_cta (see "Cluster
// synchronisation" below), which is now in ptxkit/mbarrier.cuh (packs/README.md, "What the reference
// kernels needed").
//
// Status: the goal, 1.00x cuBLASLt with every gate, is met on an H100 (80 GB HBM3, driver 580.159.04,
// GPU-bf2f235d, session 12, main's binaries at f7a11a7): bench/eval/reference.sh evaluated this file
// three times in one harness, twice (the five kernels' run and the GEMM's own): 1.004 / 1.005 / 1.007x
// and 1.005 / 1.003 / 1.003x (cuBLASLt 0.738 ms), every stage passed (memory check, dynamic SASS
// check), GMMA and TMA executed, 100% GMMA work coverage (bench/results/h100/reference/). What took it
// over the line is the wave-balanced grid (see "Persistence"): in the same GPU's variants run the full
// grid reached 0.994x and the balanced one 1.004x (bench/results/h100/session12-f7a11a7/
// reference-variants/). Earlier H100s measured the full grid at 0.993-1.006x, cuBLASLt's own time
// moving 0.744-0.763 ms between machines (examples/reference/README.md); the remote arrive, first an
// inline-PTX helper, is the pack's wrapper, which generates identical PTX. The first version passed
// every gate at 0.594x (bench/results/h100/reference-first-run/).
// Variants (examples/reference/variants/, H100, d6ab37a's source): the first version 0.617x, the same
// without the cluster 0.839x, the first version with a fixed SMs/2-cluster grid 0.614x, the full-grid
// reference with that grid 0.995x: the cluster-scope synchronisation cost the 1.6x, not the grid.
//
// Design:
//  - Tiles: 128x256x64 per CTA (two consumer warpgroups x wgmma m64n256k16, both operands from
//    smem, 128-byte swizzle). 8192x7168 gives 64x28 = 1792 tiles.
//  - Cluster of 2 CTAs along M (kClusterM; set it to 1 for the plain version): the two CTAs of a
//    cluster compute vertically adjacent tiles that share the same 256x64 B slice per k step; each
//    CTA loads its own A (128x64) and one 128-row half of B, multicast to both CTAs, so L2 -> SM
//    traffic per CTA drops from 48 KB to 32 KB per stage.
//  - Pipeline: a 4-stage ring of full/empty mbarriers (48 KB per stage = 192 KB). Each CTA's full
//    barrier expects all 48 KB of its stage (own A, own half of B, the peer's half of B); its empty
//    barrier counts one arrival per consumer warp of BOTH CTAs (16), because the peer's multicast
//    writes into this CTA's slot.
//  - Warp specialisation: warpgroup 0 is the producer (setmaxnreg 40; one thread issues the TMA
//    loads); warpgroups 1 and 2 are consumers (setmaxnreg 232), keeping one wgmma group in flight
//    and releasing each slot once the wgmmas that read it are done.
//  - Persistence: grid = the fewest clusters that finish every cluster tile in as many waves as the
//    resident maximum would (cudaOccupancyMaxActiveClusters: 66 clusters, 132 SMs on an H100 SXM; the
//    task's 896 cluster tiles need 14 waves, so 64 clusters of 14 tiles each, 4 SMs idle); a static
//    scheduler hands each cluster tile (256x256 of C) t = cluster id + i * clusters, rasterised in
//    groups of 8 cluster rows (2048 rows of C) so that the tiles in flight share A and B in L2. The
//    ring position runs on across tiles, so the producer keeps loading the next tile's k slices while
//    the consumers run the epilogue of the current one.
//  - Epilogue: per consumer warpgroup, two 8 KB staging buffers separate from the ring (so the ring
//    keeps filling): fp32 -> bf16 with stmatrix into the 128-byte-swizzled layout, one 64x64 box at
//    a time, each stored by TMA while the next box is written into the other buffer. The global
//    writes are not waited for before the next tile's main loop (only the staging reads are,
//    before a buffer is rewritten).
//  - Cluster synchronisation at CTA scope: the slot release is a remote mbarrier.arrive with the
//    default .release.cta semantics (the pack's mbar_arrive_remote_cta, as CUTLASS's
//    ClusterBarrier::arrive does), and both sides wait with the CTA-scope try_wait (mbar_wait). The
//    first version used the pack's mbar_arrive_cluster / mbar_wait_cluster (.release.cluster /
//    .acquire.cluster), as the pack's notes then advised for data from other CTAs, in every consumer
//    warp after every k step, between wgmma.wait_group and the next stage's wgmma issue: 0.617x
//    against 0.993x, and its SASS holds 6 each of MEMBAR.GPU, ERRBAR and CGAERRBAR and 11 CCTL
//    against 2 each and 3 here (static counts, bench/results/h100/reference-variants/
//    sass_fences.txt). Nothing needs cluster-scope ordering here: the data in a slot comes by TMA,
//    whose complete_tx on this CTA's own barrier makes it visible, and a release only says that the
//    wgmmas that read the slot are done (wgmma.wait_group).
//  - Limits (reasoned from the design, not measured one by one): 896 cluster tiles in 14 waves of 64
//    clusters keep 4 SMs idle throughout instead of idling 0.42 of the last wave on all of them (the
//    same SM time; the balanced grid wins by the power headroom the idle SMs leave, a reading, not a
//    measurement); the epilogue is not overlapped by ping-pong (both consumer warpgroups work on the
//    same tile and run its epilogue together), so the tensor cores idle for its length once per tile;
//    shared memory (225 KB of 227 KB) allows no more stages and no double-buffered staging.
#include <ptxbench/abi.h>
#include <ptxkit/cluster.cuh>
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>
#include <ptxkit/wgmma.cuh>

namespace {

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kConsumers = 2;
constexpr int kClusterM = 2;     // CTAs per cluster along M sharing (multicasting) the B tile; 1 or 2
constexpr int kGroupRows = 8;    // cluster rows (of kClusterM tiles each) per rasterisation group
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr uint32_t kABytes = kBM * kBK * 2;               // one A stage: 128 rows x 128 B = 16 KB
constexpr uint32_t kBBytes = kBN * kBK * 2;               // one B stage: 256 rows x 128 B = 32 KB
constexpr uint32_t kBSliceRows = kBN / kClusterM;         // rows of B each CTA of the cluster loads
constexpr uint32_t kBSliceBytes = kBSliceRows * kBK * 2;
constexpr uint32_t kStageBytes = kABytes + kBBytes;       // what each CTA's full barrier expects per stage
constexpr uint32_t kRingBytes = kStages * kStageBytes;    // 192 KB
constexpr uint32_t kStagingBytes = 2 * 64 * 64 * 2;       // per consumer warpgroup: two 64x64 bf16 boxes
constexpr uint32_t kBarrierOffset = kRingBytes + kConsumers * kStagingBytes;
constexpr uint32_t kSmemBytes = kBarrierOffset + 2 * kStages * 8 + 1024;  // + barriers + alignment slack
constexpr uint32_t kEmptyArrivals = kConsumers * 4 * kClusterM;           // one per consumer warp per CTA
static_assert(kClusterM == 1 || kClusterM == 2, "the B tile is split between at most two CTAs");
static_assert(kBSliceBytes % 1024 == 0, "each B slice must start on a 1024-byte swizzle atom");
static_assert(kSmemBytes <= 232448, "over the 227 KB of dynamic shared memory an H100 CTA may use");

// The cluster tile (kClusterM x 1 CTA tiles) that the static scheduler's step `t` names, rasterised
// in groups of kGroupRows cluster rows: inside a group the row index runs fastest, so the clusters
// working at the same time share the group's A rows and a few B columns in L2.
struct tile_coords {
  int m0, n0;
};
__device__ __forceinline__ tile_coords tile_of(int t, int cluster_rows, int num_n, uint32_t rank) {
  const int per_group = kGroupRows * num_n, group = t / per_group, in_group = t % per_group;
  const int first = group * kGroupRows, rows = min(cluster_rows - first, kGroupRows);
  const int cr = first + in_group % rows, n_blk = in_group / rows;
  return {(cr * kClusterM + static_cast<int>(rank)) * kBM, n_blk * kBN};
}

__global__ void __cluster_dims__(kClusterM, 1, 1) __launch_bounds__(kThreads, 1)
gemm_persistent_kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                       const __grid_constant__ CUtensorMap tma_c, int M, int N, int K) {
  using namespace ptxkit;
  extern __shared__ uint8_t smem_raw[];
  // The dynamic smem window starts at the same offset in every CTA of the cluster, so the aligned
  // offsets (which multicast and remote arrives address by) are the same in both CTAs too.
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kBarrierOffset);
  uint64_t* empty = full + kStages;
  auto a_tile = [&](uint32_t s) { return smem + s * kStageBytes; };
  auto b_tile = [&](uint32_t s) { return smem + s * kStageBytes + kABytes; };

  const int num_m = (M + kBM - 1) / kBM, num_n = (N + kBN - 1) / kBN, k_tiles = (K + kBK - 1) / kBK;
  const int cluster_rows = (num_m + kClusterM - 1) / kClusterM;
  const int num_tiles = cluster_rows * num_n;  // cluster tiles
  const int cluster_id = blockIdx.x / kClusterM, num_clusters = gridDim.x / kClusterM;
  const uint32_t rank = kClusterM > 1 ? cluster_ctarank() : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);                 // this CTA's producer's arrive_expect_tx
      mbar_init(&empty[s], kEmptyArrivals);   // every consumer warp of every CTA in the cluster
    }
    fence_mbarrier_init();
  }
  // The peer's barriers must be initialised before this CTA multicasts into them or arrives on them.
  if constexpr (kClusterM > 1) cluster_sync(); else __syncthreads();

  const uint32_t wg = warpgroup_id();
  if (wg == 0) {
    // ---------------- producer warpgroup: one thread issues every TMA load ----------------
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tma_a);
      prefetch_tensormap(&tma_b);
      ring_pos<kStages> pos;  // runs on across tiles, in step with the consumers'
      // Not unrolled: this thread runs with 40 registers after setmaxnreg_dec, and one TMA issue
      // per k step keeps far ahead of the tensor cores anyway.
#pragma unroll 1
      for (int t = cluster_id; t < num_tiles; t += num_clusters) {
        const tile_coords tc = tile_of(t, cluster_rows, num_n, rank);
#pragma unroll 1
        for (int kt = 0; kt < k_tiles; ++kt) {
          // Wait until every consumer warp of the cluster released this slot's previous use (the
          // peer's multicast writes here as well). First pass: parity 1 of a fresh barrier is done.
          mbar_wait(&empty[pos.index], pos.phase ^ 1);
          // All kStageBytes land on this CTA's barrier: A and our B half from us, the other B half
          // from the peer (whose bytes may even arrive first; the phase cannot complete before
          // this arrival).
          mbar_arrive_expect_tx(&full[pos.index], kStageBytes);
          tma_load_2d(a_tile(pos.index), &tma_a, &full[pos.index], kt * kBK, tc.m0);
          if constexpr (kClusterM > 1)
            tma_load_2d_multicast(b_tile(pos.index) + rank * kBSliceBytes, &tma_b, &full[pos.index], kt * kBK,
                                  tc.n0 + static_cast<int>(rank * kBSliceRows), static_cast<uint16_t>((1u << kClusterM) - 1));
          else
            tma_load_2d(b_tile(pos.index), &tma_b, &full[pos.index], kt * kBK, tc.n0);
          pos.advance();
        }
      }
    }
    __syncwarp();
  } else {
    // ---------------- consumer warpgroups: wgmma main loop and epilogue ----------------
    setmaxnreg_inc<232>();
    const uint32_t cw = wg - 1;                       // consumer index: rows 64*cw .. 64*cw+63 of the tile
    const uint32_t row_off = cw * 64 * 128;           // those rows inside the A stage
    const uint32_t lane = threadIdx.x % 32;
    const bool wg_leader = threadIdx.x % 128 == 0;
    const uint32_t epi_bar = 2 + cw;                  // named barrier of this warpgroup (0 is __syncthreads)
    uint8_t* staging = smem + kRingBytes + cw * kStagingBytes;
    float acc[kBN / 2];
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;

    // One arrival per consumer warp on the slot's empty barrier of every CTA in the cluster.
    auto release = [&](uint32_t slot) {
      if constexpr (kClusterM > 1) {
        if (lane < kClusterM) mbar_arrive_remote_cta(&empty[slot], lane);
      } else {
        if (lane == 0) mbar_arrive(&empty[slot]);
      }
    };

    ring_pos<kStages> pos;
    for (int t = cluster_id; t < num_tiles; t += num_clusters) {
      const tile_coords tc = tile_of(t, cluster_rows, num_n, rank);
      uint32_t prev = 0;
      for (int kt = 0; kt < k_tiles; ++kt) {
        mbar_wait(&full[pos.index], pos.phase);  // CTA scope: the TMA's complete_tx publishes the data
        const uint64_t da = make_desc_k_major<swizzle::b128>(a_tile(pos.index) + row_off);
        const uint64_t db = make_desc_k_major<swizzle::b128>(b_tile(pos.index));
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk)  // the tile's first k step overwrites the accumulators
          wgmma_m64n256k16_ss(acc, desc_advance(da, kk * 32), desc_advance(db, kk * 32), (kt > 0 || kk > 0) ? 1 : 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's wgmmas are done: release that slot
        if (kt > 0) release(prev);
        prev = pos.index;
        pos.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      release(prev);  // the tile's last slot: every use of every slot is released exactly once

      // Epilogue, one 64-column block at a time through this warpgroup's two 8 KB staging buffers
      // (each a 64x64 box in the TMA store's 128-byte-swizzled layout), alternating, so that
      // writing block b overlaps the store of block b-1. Before buffer b%2 is rewritten, the store
      // that last read it (block b-2, or the previous tile's block 2 or 3) must have read it: all
      // bulk groups but the newest one.
      const int row = tc.m0 + static_cast<int>(cw) * 64;
#pragma unroll
      for (int b = 0; b < kBN / 64; ++b) {
        uint8_t* buf = staging + (b % 2) * (kStagingBytes / 2);
        if (wg_leader) bulk_wait_group_read<1>();
        named_barrier_sync<128>(epi_bar);
        const float(&block)[32] = *reinterpret_cast<const float(*)[32]>(&acc[b * 32]);  // columns 64b..64b+63
        stmatrix_acc_bf16<64, swizzle::b128>(block, buf);
        fence_proxy_async_smem();
        named_barrier_sync<128>(epi_bar);
        if (wg_leader) {
          tma_store_2d(&tma_c, buf, tc.n0 + b * 64, row);
          bulk_commit_group();
        }
      }
    }
    if (wg_leader) bulk_wait_group<0>();  // the last stores are complete before the CTA exits
  }
  // No CTA exits while its peer may still arrive on its empty barriers.
  if constexpr (kClusterM > 1) cluster_sync();
}

}  // namespace

void run(ptxbench::tensor_view A, ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t stream) {
  const int M = static_cast<int>(A.size(0)), K = static_cast<int>(A.size(1)), N = static_cast<int>(B.size(0));
  if (B.size(1) != K || C.size(0) != M || C.size(1) != N) throw ptxbench::shape_error("shape mismatch");
  if (!A.is_contiguous() || !B.is_contiguous() || !C.is_contiguous() || K % 8 != 0 || N % 8 != 0)
    throw ptxbench::shape_error("needs contiguous tensors with K and N multiples of 8 (TMA strides are 16-byte units)");
  if (M <= 0 || N <= 0 || K <= 0) throw ptxbench::shape_error("needs M, N and K >= 1");
  using ptxkit::swizzle;
  const CUtensorMap ta = ptxkit::make_tma_2d_bf16(A.data_ptr(), M, K, K, kBM, kBK, swizzle::b128);
  const CUtensorMap tb = ptxkit::make_tma_2d_bf16(B.data_ptr(), N, K, K, kBSliceRows, kBK, swizzle::b128);
  const CUtensorMap tc = ptxkit::make_tma_2d_bf16(C.data_ptr(), M, N, N, 64, 64, swizzle::b128);

  // Once per process: enable the shared memory and find how many clusters fit at once (the grid).
  static const int max_clusters = [] {
    const cudaError_t e =
        cudaFuncSetAttribute(gemm_persistent_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e != cudaSuccess)
      throw ptxbench::abi_error("cannot enable the kernel's dynamic shared memory (" + std::to_string(kSmemBytes) +
                                " bytes): " + cudaGetErrorString(e));
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
      (void)cudaGetLastError();
      sms = 132;  // H100 SXM
    }
    int clusters = sms / kClusterM;
    if (kClusterM > 1) {
      // Not every SM may be usable for a cluster (the GPCs decide); ask the occupancy calculator.
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(static_cast<unsigned>(clusters * kClusterM));
      cfg.blockDim = dim3(kThreads);
      cfg.dynamicSmemBytes = kSmemBytes;
      int fit = 0;
      if (cudaOccupancyMaxActiveClusters(&fit, gemm_persistent_kernel, &cfg) == cudaSuccess && fit > 0)
        clusters = fit < clusters ? fit : clusters;
      else
        (void)cudaGetLastError();  // keep one cluster per SM pair; do not leave a stale error behind
    }
    return clusters > 0 ? clusters : 1;
  }();

  const int num_m = (M + kBM - 1) / kBM, num_n = (N + kBN - 1) / kBN;
  const int tiles = ((num_m + kClusterM - 1) / kClusterM) * num_n;  // cluster tiles
  // A wave-balanced grid: the fewest clusters that still finish every tile in the same number of waves
  // (the task's 896 cluster tiles on 66 clusters are 13.6 waves, so 14; 64 clusters run exactly 14 each).
  // The makespan in tiles is unchanged; 1.004x cuBLASLt against 0.994x for the full grid in one H100 run
  // (variant v9, session 12). Why it is faster is not measured: perhaps the idle SMs' power headroom.
  const int fit = max_clusters < tiles ? max_clusters : tiles, waves = (tiles + fit - 1) / fit;
  const int clusters = (tiles + waves - 1) / waves;
  gemm_persistent_kernel<<<clusters * kClusterM, kThreads, kSmemBytes, stream>>>(ta, tb, tc, M, N, K);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw ptxbench::abi_error(std::string("launch failed: ") + cudaGetErrorString(err));
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
