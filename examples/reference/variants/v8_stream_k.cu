// VARIANT v8: the reference with a hybrid data-parallel + Stream-K schedule: 12 data-parallel waves as now, then the last 104 cluster tiles' 8320 k steps split evenly over the 66 clusters (126-127 each), split tiles' fp32 partials combined through a global workspace with per-tile flags; on an H100 (session 8, bench/results/h100/session8-870f055/) correct but slower: 0.946x cuBLASLt where the reference made 0.994x, so not promoted
//
// Why: the reference hands each of the 66 clusters whole 256x256 cluster tiles, 896 of them, in a
// static round robin: 38 clusters run 14 tiles and 28 run 13 (13.58 waves). The kernel lasts as
// long as a 14-tile cluster, 14 x 80 = 1120 k steps (K = 5120 = 80 steps of 64), while the work is
// 896 x 80 / 66 = 1086.1 k steps per cluster: 3.0 % of the SM time idles in the last wave.
//
// Schedule (struct unit_schedule; both CTAs of a cluster, producer and consumers alike, walk the
// same units, so the Stream-K unit is the cluster tile and B stays multicast):
//  - Data-parallel part: W = floor(tiles / clusters) - 1 = 12 waves: the first 12 x 66 = 792 cluster
//    tiles of the reference's rasterised order, tile t = cluster + i * 66 for i < 12, exactly as now.
//  - Stream-K part: the remaining S = 104 tiles are S x 80 = 8320 k steps in one row (tile after
//    tile, k fastest), cut into 66 contiguous ranges, range r = [floor(8320 r / 66),
//    floor(8320 (r + 1) / 66)): 126 or 127 k steps each. Every cluster then runs 960 + 126..127 =
//    1086..1087 k steps instead of 1040 or 1120. A range cuts its tiles into units: its first unit
//    may be the tail [x, 80) of a tile (a "writer" piece), its last the head [0, y) of another (an
//    "owner" piece), everything between whole tiles; e.g. a range may be 17 tail steps of one tile,
//    80 of the next and 29 head steps of a third.
//  - Why 12 waves and not 13 (38 tiles, 46-step ranges): the host takes one full wave into the
//    Stream-K part (S is then always in (clusters, 2 clusters)), so every range is at least k_tiles
//    long (length >= floor(S k_tiles / clusters) >= k_tiles): a tile has at most two contributors
//    and a range at most one piece of each kind, so a single flag and a single partial per split
//    tile suffice, and the partial is ready long before its owner needs it (below). With 13 waves a
//    tile could have three contributors (middle pieces) and an owner would wait on pieces computed
//    at about the same time as its own.
//  - Why exact Stream-K rather than a fixed split of the trailing tiles into equal K chunks: 104
//    tiles x 2 chunks of 40 steps = 208 chunks over 66 clusters, 4 for the busiest = 160 steps, no
//    gain over the reference's 160; 3 chunks of 26-27 steps = 312 chunks, 5 for the busiest = 134
//    steps (1094 in all, 0.7 % above exact) and 3 contributors per tile. Exact ranges need the same
//    protocol (one partial and one flag per split tile), fewer contributors and fewer units.
//  - Ranges are handed out in reverse cluster order (range r to cluster 65 - r), see "No deadlock".
//  - When the tiles fill whole waves (or there are fewer tiles than clusters, or k_tiles < 2) the
//    host passes sk_tiles = 0 and the kernel is the reference's schedule.
//
// Fixup protocol, per split tile: its writer is range r + 1 (the tile's tail is that range's first
// piece), its owner range r (the head is that range's last piece); they meet in workspace slot r + 1,
// one flag and one 64 KB partial per (slot, CTA rank, consumer warpgroup), so the two warpgroups and
// the two CTAs of a cluster never wait for each other.
//  - Writer: after its tail's main loop (wgmma_wait 0, the last slot released, as after any tile)
//    each consumer thread stores its 128 fp32 accumulators to the slot (st.global.cg, 32 float4 in
//    register order, 512 contiguous bytes per warp store), the warpgroup syncs on its named barrier,
//    and its leader stores flag = 1 with st.release.gpu. No epilogue: the owner writes that C tile.
//  - Owner: after its head's main loop (which starts at k step 0, so its accumulators start from
//    zero as for any tile) the warpgroup's leader spins with ld.acquire.gpu until the flag reads 1,
//    resets it to 0 (st.relaxed.gpu), the warpgroup syncs on its named barrier, and every thread adds
//    the same 128 positions of the partial (ld.global.cg, 8 float4 in flight) to its accumulators;
//    then the reference's epilogue (stmatrix + TMA store) writes the tile.
//  - Memory ordering: each writer thread's stores precede (program order) its bar.sync, which
//    synchronises with the leader's bar.sync; the leader's st.release.gpu is read by the owner
//    leader's ld.acquire.gpu (release/acquire at gpu scope: synchronises-with across SMs); that
//    precedes its bar.sync, which synchronises with every owner thread's bar.sync, which precedes
//    the thread's loads. The PTX memory model's causality order is transitive over these edges, so
//    every load reads the writer's stores (the pattern of a grid-wide barrier: barrier, one thread's
//    gpu-scope release; one thread's gpu-scope acquire, barrier). The acquire also keeps L1 from
//    serving stale lines; .cg on both sides keeps the partials out of L1 altogether.
//  - Reset: every flag a launch sets is reset by its owner in the same launch (each writer piece
//    has exactly one owner piece in the same launch, by construction), so all flags are 0 whenever
//    a launch has ended. run() zeroes them once, right after allocating the workspace
//    (cudaMemsetAsync on the call's stream, ordered before the launch; first call only). Every call
//    launches exactly one kernel, as the reference does; the first also puts that one memset on the
//    GPU. A flag is reset right after it is read: nothing else reads it in this launch, and the next
//    launch (whose writer reuses the slot) starts after this one's loads.
//  - No deadlock: a writer piece is the first unit of its range and waits for nothing but its own
//    ring; an owner piece is the last unit of its range and waits only for the writer of the next
//    range, which runs on cluster 64 - r, a lower index than its own 65 - r. All 66 clusters are
//    resident at once (the grid is cudaOccupancyMaxActiveClusters' answer), and were they not,
//    clusters are dispatched in index order in practice, so every awaited writer has started.
//  - Waiting: a writer's tail of p <= 79 steps is done p steps (+ its store, ~1 us) after its range
//    starts; its owner's head ends L = 126..127 steps after the owner's range starts; both ranges
//    start when their clusters finish their 12 data-parallel tiles, so the partial is ready about
//    L - p >= 47 k steps (~30 us) before it is needed, far more than the clusters' skew after 12
//    waves should be. The spin should find the flag set at once.
//
// What the pack lacked: any gpu-scope synchronisation through global memory (ptxkit/fence.cuh has
// proxy fences, named barriers and a cluster-scope acq_rel fence; ptxkit/mbarrier.cuh only
// shared-memory barriers): no ld.acquire / st.release / atomics at .gpu scope. Three one-line
// inline-PTX helpers here (ld_acquire_gpu, st_release_gpu, st_relaxed_gpu); the partials use CUDA's
// __stcg / __ldcg.
//
// Scratch: one device buffer that run() allocates on its first call (cudaMalloc) and keeps, like
// mha_bwd.cu: the flags (max clusters x 2 CTAs x 2 warpgroups x 4 bytes, padded to 256 bytes), then
// one 256 KiB slot per cluster (2 CTAs x 2 warpgroups x 128 threads x 128 fp32): 66 slots, 16.5 MiB
// plus 1.25 KiB of flags at the task's grid. Slot 0 is never used (range 0 starts at a tile
// boundary), nor any range whose start falls on one: 64 split tiles, so 64 slots (16 MiB), at the
// task's shape. Each slot is written and read once per call, ~50 us apart, so it should stay in L2
// (50 MB) between the two.
//
// Expected (reasoned, not measured): the busiest cluster runs 1087 k steps instead of 1120 (-2.9 %).
// Costs: per writer piece one 128 KB store per CTA (~1 us, while the producer already loads the
// next unit), per owner piece one 128 KB read per CTA (~2-3 us, on the critical path at the very
// end), and up to one more unit boundary per cluster than a whole tile (a writer's has no
// epilogue). Net perhaps 2 % at the same clock; less if the GPU is power-limited, since all SMs now
// stay busy to the end where the reference's last wave leaves 42 % of them idle for ~55 us. Risks:
// the clusters' finishing skew after 12 data-parallel waves (it adds to the Stream-K part
// unchanged), and Stream-K tiles' different fp32 summation order (head + tail instead of one run; the
// bf16 result may differ from the reference's in the last bit, well inside the task's tolerance).
//
// Everything else is the reference's: the cluster, the multicast, the 4-stage ring, the warp roles,
// setmaxnreg, the epilogue. The changes: the unit schedule (one copy walked by the producer thread
// and one by each consumer warpgroup, so ring positions agree: every unit has ke - kb >= 1 k steps
// and both sides load/consume exactly those), the accumulate flag of a unit's first k step (kt > kb,
// not kt > 0), the writer / owner steps after the main loop, the kernel's four extra arguments and
// run()'s workspace.
//
// Checked so far (CPU only): the build and link gates; ptxas: 168 registers, 0 spill bytes; and the
// schedule arithmetic, by a host program (not committed) that ran this file's unit_schedule and
// split_tiles for the task (896 tiles, 66 clusters, 80 k steps: 792 + 104 tiles, 1086..1087 k steps
// per cluster, 64 split tiles, at most 3 Stream-K units per cluster, each partial ready >= 48 k steps
// before its owner's head ends if the ranges start together), the test's ragged shape (133 tiles,
// 6 k steps: 66 + 67 tiles, 55 split tiles) and 5,600 other (tiles, clusters, k) triples: every
// (tile, k step) covered exactly once, no unit empty, no middle piece, every writer paired with
// exactly one owner of the same tile and split point on a higher cluster index, slots in range.
// GPU correctness test: ptxbench_gpu_reference_stream_k_tests (tests/gpu/reference_gemm_test.cu
// built with PTXBENCH_REFERENCE_GEMM_STREAM_K: the ragged shape and the task's, each called twice,
// bit for bit against the host).
//
// The reference's header follows, unchanged; its design notes describe the parts kept.
//
// Reference kernel (issue 30) for task gemm_n7168_k5120: C[M,N] = A[M,K] * B[N,K]^T, bf16 in and
// out, fp32 accumulation. Written only with #includes of the sm90a knowledge pack (ptxkit/*.cuh) and
// <ptxbench/abi.h>, like examples/gemm/wgmma_tma_pack.cu (0.975x cuBLASLt on an H100 in the same run),
// which it extends. It needed one wrapper the pack lacked, mbar_arrive_remote_cta (see "Cluster
// synchronisation" below), which is now in ptxkit/mbarrier.cuh (packs/README.md, "What the reference
// kernels needed").
//
// Status: run on an H100 (80 GB HBM3, driver 580.159.04) by bench/eval/reference_variants.sh,
// evaluated at d6ab37a's source: PASSED, correct (max error 0), 0.993x cuBLASLt (0.7682 ms vs
// 0.7632 ms, median of 30 per-pair ratios, 95% interval 0.991-0.995); bench/results/h100/
// reference-variants/. That source had the remote arrive as its own inline-PTX helper; the pack
// wrapper generates identical PTX (nvcc -ptx with the candidate build's flags: byte-identical without
// -lineinfo; with it only line numbers and the inlined function's name in the debug sections differ).
// The goal, 1.00x cuBLASLt, is NOT YET MET (see "Limits"). That run skipped the memory check and the
// dynamic SASS check (--no-sanitize --no-dynamic-check); the first version passed both, with GMMA
// and TMA executed and 100% GMMA work coverage, at 0.594x (bench/results/h100/reference-first-run/).
// Variants from the same run (examples/reference/variants/): the first version 0.617x, the same
// without the cluster 0.839x, the first version with a fixed SMs/2-cluster grid 0.614x, this kernel
// with that grid 0.995x: the cluster-scope synchronisation cost the 1.6x, not the grid.
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
//  - Persistence: grid = as many CTAs as can be resident (one per SM: 132 on an H100 SXM, in 66
//    clusters); a static scheduler hands each cluster tile (256x256 of C) t = cluster id +
//    i * clusters, rasterised in groups of 8 cluster rows (2048 rows of C) so that the tiles in
//    flight share A and B in L2. The ring position runs on across tiles, so the producer keeps
//    loading the next tile's k slices while the consumers run the epilogue of the current one.
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
//  - Limits (why 0.993x and not 1.00x; reasoned from the design, not yet measured one by one):
//    1792 tiles over 132 SMs is 13.6 waves, so the last wave is 58% full (the same quantisation as
//    the non-persistent kernel: 0.42 of 14 waves idle, about 3% of the SM time); the epilogue is not overlapped
//    by ping-pong (both consumer warpgroups work on the same tile and run its epilogue together),
//    so the tensor cores idle for its length once per tile; shared memory (225 KB of 227 KB) allows
//    no more stages and no double-buffered staging. cudaOccupancyMaxActiveClusters answers 66
//    clusters, all 132 SMs (occupancy.txt in the results).
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
constexpr bool kStreamK = true;  // false: the reference's data-parallel schedule (no workspace used)
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

// Stream-K workspace. One slot per Stream-K range boundary (range r's first piece writes slot r):
// per CTA rank and consumer warpgroup, each of the 128 threads' 128 fp32 accumulators, stored as 32
// float4 in register order (float4 i of thread t at (i * 128 + t)), so a warp's store or load of one
// float4 index is 512 contiguous bytes, and the owner's thread t reads what the writer's thread t
// wrote: the same accumulator positions, since both run the same warpgroup of the same CTA rank.
constexpr uint32_t kAccPerThread = kBN / 2;                                     // 128 floats
constexpr uint32_t kPartFloat4PerWg = 128 * kAccPerThread / 4;                  // 4096 float4 = 64 KB
constexpr uint32_t kPartFloat4PerSlot = kPartFloat4PerWg * kConsumers * kClusterM;  // 256 KB
constexpr uint32_t kFlagsPerSlot = kConsumers * kClusterM;
constexpr int kFixupChunk = 8;  // float4 loads in flight per thread while adding a partial (32 registers)
static_assert((kAccPerThread / 4) % kFixupChunk == 0, "the partial is added in whole chunks");

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

// One unit of a cluster's work: k steps [kb, ke) of cluster tile `tile`. kb > 0: the tail of a split
// tile (this cluster writes its partial to slot `range`); ke < k_tiles: the head of a split tile
// (this cluster owns it: adds slot `range` + 1's partial, then stores C); neither: a whole tile.
struct work_unit {
  int tile, kb, ke;
};

// The hybrid schedule as one cursor, walked identically by the producer thread and by each consumer
// warpgroup (so the ring positions agree), and by the host-side check of the arithmetic. First the
// data-parallel tiles t = cluster + i * clusters (t < dp_tiles), as the reference; then this
// cluster's Stream-K range: range r = clusters - 1 - cluster (reverse order: an owner waits only for
// a lower cluster index) covers the global k steps [floor(total r / clusters), floor(total (r+1) /
// clusters)) of the sk_tiles trailing tiles laid out tile after tile, k fastest (total = sk_tiles x
// k_tiles). The host chooses sk_tiles in (clusters, 2 clusters) or 0, so a range is at least k_tiles
// long: its first piece can be a tail, its last a head, and a tile has at most two contributors.
struct unit_schedule {
  int next_dp, dp_tiles, clusters, k_tiles;
  int it, end;  // Stream-K cursor, global k steps (the host keeps sk_tiles x k_tiles below 2^31)
  int range;    // this cluster's Stream-K range index r
  __host__ __device__ unit_schedule(int cluster, int num_clusters, int dp, int sk, int k)
      : next_dp(cluster), dp_tiles(dp), clusters(num_clusters), k_tiles(k) {
    range = num_clusters - 1 - cluster;
    const long long total = static_cast<long long>(sk) * k;
    it = static_cast<int>(total * range / num_clusters);
    end = static_cast<int>(total * (range + 1) / num_clusters);
  }
  __host__ __device__ bool next(work_unit& u) {
    if (next_dp < dp_tiles) {
      u = {next_dp, 0, k_tiles};
      next_dp += clusters;
      return true;
    }
    if (it >= end) return false;
    const int s = it / k_tiles, kb = it - s * k_tiles;
    const int ke = end - it < k_tiles - kb ? kb + (end - it) : k_tiles;
    u = {dp_tiles + s, kb, ke};
    it += ke - kb;
    return true;
  }
};

// GPU-scope flag operations on global memory. The pack has none (ptxkit/fence.cuh: proxy fences,
// named barriers, a cluster-scope fence; ptxkit/mbarrier.cuh: shared-memory barriers only), so they
// are inline PTX here.
__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

__global__ void __cluster_dims__(kClusterM, 1, 1) __launch_bounds__(kThreads, 1)
gemm_stream_k_kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                     const __grid_constant__ CUtensorMap tma_c, int M, int N, int K, int dp_tiles, int sk_tiles,
                     uint32_t* __restrict__ flags, float4* __restrict__ partials) {
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
      ring_pos<kStages> pos;  // runs on across units, in step with the consumers'
      unit_schedule sched(cluster_id, num_clusters, dp_tiles, sk_tiles, k_tiles);
      work_unit u;
      // Not unrolled: this thread runs with 40 registers after setmaxnreg_dec, and one TMA issue
      // per k step keeps far ahead of the tensor cores anyway.
#pragma unroll 1
      while (sched.next(u)) {
        const tile_coords tc = tile_of(u.tile, cluster_rows, num_n, rank);
#pragma unroll 1
        for (int kt = u.kb; kt < u.ke; ++kt) {
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
    const uint32_t tid = threadIdx.x % 128;           // thread in the warpgroup
    const bool wg_leader = tid == 0;
    const uint32_t epi_bar = 2 + cw;                  // named barrier of this warpgroup (0 is __syncthreads)
    uint8_t* staging = smem + kRingBytes + cw * kStagingBytes;
    // This warpgroup's flag and partial in workspace slot s.
    const uint32_t part = rank * kConsumers + cw;
    auto flag_of = [&](int s) { return flags + s * kFlagsPerSlot + part; };
    auto partial_of = [&](int s) {
      return partials + static_cast<size_t>(s) * kPartFloat4PerSlot + part * kPartFloat4PerWg + tid;
    };
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
    unit_schedule sched(cluster_id, num_clusters, dp_tiles, sk_tiles, k_tiles);
    work_unit u;
    while (sched.next(u)) {
      const tile_coords tc = tile_of(u.tile, cluster_rows, num_n, rank);
      uint32_t prev = 0;
      for (int kt = u.kb; kt < u.ke; ++kt) {
        mbar_wait(&full[pos.index], pos.phase);  // CTA scope: the TMA's complete_tx publishes the data
        const uint64_t da = make_desc_k_major<swizzle::b128>(a_tile(pos.index) + row_off);
        const uint64_t db = make_desc_k_major<swizzle::b128>(b_tile(pos.index));
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk)  // the unit's first k step overwrites the accumulators
          wgmma_m64n256k16_ss(acc, desc_advance(da, kk * 32), desc_advance(db, kk * 32), (kt > u.kb || kk > 0) ? 1 : 0);
        wgmma_commit();
        wgmma_wait<1>();  // the previous stage's wgmmas are done: release that slot
        if (kt > u.kb) release(prev);
        prev = pos.index;
        pos.advance();
      }
      wgmma_wait<0>();
      fence_regs(acc);
      release(prev);  // the unit's last slot: every use of every slot is released exactly once

      if (u.kb > 0) {
        // Stream-K writer (the tail of a split tile, the first piece of this cluster's range): hand
        // the fp32 partial to the tile's owner (the previous range) through slot `range`; no epilogue.
        float4* dst = partial_of(sched.range);
#pragma unroll
        for (int i = 0; i < kBN / 8; ++i)
          __stcg(dst + i * 128, make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
        // Every thread's stores precede the barrier; the leader's release follows it (causality
        // order is transitive: the owner's acquire then sees all 128 threads' stores).
        named_barrier_sync<128>(epi_bar);
        if (wg_leader) st_release_gpu(flag_of(sched.range), 1u);
        continue;
      }
      if (u.ke < k_tiles) {
        // Stream-K owner (the head of a split tile, the last piece of this cluster's range): wait for
        // the next range's writer, add its partial, then store the tile like any other.
        if (wg_leader) {
          uint32_t* f = flag_of(sched.range + 1);
          while (ld_acquire_gpu(f) == 0u) {
          }
          st_relaxed_gpu(f, 0u);  // consumed: every flag is 0 again when the launch ends
        }
        named_barrier_sync<128>(epi_bar);  // the leader's acquire precedes every thread's loads
        const float4* src = partial_of(sched.range + 1);
#pragma unroll
        for (int c = 0; c < kBN / 8; c += kFixupChunk) {
          float4 v[kFixupChunk];
#pragma unroll
          for (int j = 0; j < kFixupChunk; ++j) v[j] = __ldcg(src + (c + j) * 128);
#pragma unroll
          for (int j = 0; j < kFixupChunk; ++j) {
            acc[4 * (c + j)] += v[j].x;
            acc[4 * (c + j) + 1] += v[j].y;
            acc[4 * (c + j) + 2] += v[j].z;
            acc[4 * (c + j) + 3] += v[j].w;
          }
        }
      }

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

// The host's split of the cluster tiles: dp_tiles data-parallel tiles (whole waves), then sk_tiles
// shared along K by all clusters. Stream-K only when the tiles do not fill whole waves; then the
// last full wave joins the remainder (sk_tiles in (clusters, 2 clusters)), so every Stream-K range
// is at least k_tiles long (see unit_schedule).
struct split {
  int dp_tiles, sk_tiles;
};
inline split split_tiles(int tiles, int clusters, int k_tiles) {
  if (!kStreamK || clusters >= tiles || tiles % clusters == 0 || k_tiles < 2) return {tiles, 0};
  const int dp = (tiles / clusters - 1) * clusters, sk = tiles - dp;
  // The device cursor runs in int: keep the Stream-K k steps below 2^31 (far above the task's 8320).
  if (static_cast<long long>(sk) * k_tiles >= (1ll << 31)) return {tiles, 0};
  return {dp, sk};
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
        cudaFuncSetAttribute(gemm_stream_k_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
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
      if (cudaOccupancyMaxActiveClusters(&fit, gemm_stream_k_kernel, &cfg) == cudaSuccess && fit > 0)
        clusters = fit < clusters ? fit : clusters;
      else
        (void)cudaGetLastError();  // keep one cluster per SM pair; do not leave a stale error behind
    }
    return clusters > 0 ? clusters : 1;
  }();

  // Workspace, allocated on the first call and kept (the grid never exceeds max_clusters, so its
  // size never changes): flags (one uint32 per slot, CTA rank and consumer warpgroup; 256-byte
  // padded), then the partials. The flags are zeroed once, here, on the call's stream; every launch
  // leaves them zero again (each flag it sets is reset by its owner), so no call needs a memset.
  struct workspace {
    void* ptr = nullptr;
    uint32_t* flags = nullptr;
    float4* partials = nullptr;
  };
  static workspace ws;
  if (ws.ptr == nullptr) {
    const size_t flag_bytes = (static_cast<size_t>(max_clusters) * kFlagsPerSlot * sizeof(uint32_t) + 255) & ~size_t(255);
    const size_t bytes = flag_bytes + static_cast<size_t>(max_clusters) * kPartFloat4PerSlot * sizeof(float4);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) throw ptxbench::abi_error(std::string("cudaMalloc(workspace): ") + cudaGetErrorString(e));
    e = cudaMemsetAsync(p, 0, flag_bytes, stream);
    if (e != cudaSuccess) {
      (void)cudaFree(p);
      throw ptxbench::abi_error(std::string("cudaMemsetAsync(workspace flags): ") + cudaGetErrorString(e));
    }
    ws.ptr = p;
    ws.flags = static_cast<uint32_t*>(p);
    ws.partials = reinterpret_cast<float4*>(static_cast<char*>(p) + flag_bytes);
  }

  const int num_m = (M + kBM - 1) / kBM, num_n = (N + kBN - 1) / kBN, k_tiles = (K + kBK - 1) / kBK;
  const int tiles = ((num_m + kClusterM - 1) / kClusterM) * num_n;  // cluster tiles
  const int clusters = max_clusters < tiles ? max_clusters : tiles;
  const split sp = split_tiles(tiles, clusters, k_tiles);
  gemm_stream_k_kernel<<<clusters * kClusterM, kThreads, kSmemBytes, stream>>>(ta, tb, tc, M, N, K, sp.dp_tiles,
                                                                              sp.sk_tiles, ws.flags, ws.partials);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw ptxbench::abi_error(std::string("launch failed: ") + cudaGetErrorString(err));
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
