// Reference kernel (issue 30) for task mha_with_lse_d128_causal: O = softmax(mask(Q K^T / sqrt(128))) V
// and the natural-log LSE per query row, query i attending keys j <= i (top-left aligned); Q, K, V, O
// [B, H, S, 128] bf16 contiguous, LSE [B, H, S] fp32. This is mha_fwd.cu with kCausal = true.
// Written only with #includes of the sm90a knowledge pack (ptxkit/*.cuh) and <ptxbench/abi.h>; it
// follows packs/sm90a/patterns/fa3_fwd_v1.md and reuses examples/reference/gemm_persistent.cu's ring,
// setmaxnreg and TMA-store patterns. It needed nothing beyond the pack (wgmma with TransB = 1 and the
// MN-major descriptor for V, both GPU-tested by tests/gpu/pack_sm90a_wgmma_test.cu, were there).
//
// Status: on an H100 (bench/results/h100/reference/, session 6) 1.003x cuDNN plain, 1.014x causal, all gates passed;
// correctness test: tests/gpu/reference_attention_test.cu. The limits named below are reasoned, not measured.
//
// Design:
//  - Work unit ("tile"): 128 query rows of one (batch, head); S/128 x B*H tiles (6144 for the task).
//    Persistent grid (one CTA per SM, 1 CTA/SM by registers and 193 KB of smem) with a dynamic tile
//    scheduler: the producer claims its CTA's next tile with one atomicAdd on a counter that run()
//    zeroes before each launch. Order: heads in groups of 4, and inside a group the query tiles
//    (longest first when causal) with the 4 heads fastest, so the ~132 tiles in flight read the K/V
//    of a few heads from L2 and the causal tail is short tiles (simulated: ~2% over ideal for causal,
//    against ~8% for a static stride or a non-persistent grid with 1 CTA per SM).
//  - CTA = 3 warpgroups. Warpgroup 0 = producer (setmaxnreg 24; one thread issues every TMA load):
//    the Q tile once per tile (4 boxes of 64 rows x 64 d, 32 KB), then K_j and V_j of every KV tile
//    (128 keys x 128 d = two 128x64 boxes, 32 KB each) through a 2-stage ring with separate
//    full/empty barriers for K and V, so S = Q K_j^T can start before V_j lands and K slots free
//    before V slots. Warpgroups 1 and 2 = consumers (setmaxnreg 240), 64 query rows each.
//  - Both GEMMs are wgmma m64n128k16: S = Q K^T with both operands from smem (K-major, 128-byte
//    swizzle, 8 k-steps over d); O += P V with P (bf16) as the register A operand (acc_to_a_frag, no
//    data movement) and V from smem in its natural [key][d] layout as an MN-major B (TransB = 1, two
//    64-d column blocks 16 KB apart = LBO), 8 k-steps over the keys. No transpose copy.
//  - Intra-warpgroup overlap (fa3_fwd_v1.md 1.): iteration j issues S_j = Q K_j^T, then
//    O += P_{j-1} V_{j-1}, waits only for S_j (wait_group 1), does the online softmax of S_j while the
//    PV GEMM runs, then waits for it and rescales O. Registers: O 64 + S 64 + P 32 fp32/b32 per thread.
//  - Ping-pong (fa3_fwd_v1.md 2., kPingPong): the two consumer warpgroups take turns issuing their
//    GEMMs (named barriers 3 and 4), so one's softmax overlaps the other's GEMMs.
//  - Softmax in the exp2 domain: scores scaled by scale*log2(e) in one FFMA, ex2.approx; the row max
//    is reduced over the 4 lanes of a row each KV tile, the row sum only once at the end.
//  - Causal: KV tiles after the query tile are never loaded; only the diagonal tile (the last) is
//    masked; a query row always sees key 0 of its own tile's diagonal, so no row is fully masked.
//  - Epilogue per consumer warpgroup: O / l to bf16 with stmatrix into its own 16 KB staging buffer
//    (two 64x64 boxes, 128-byte swizzle; separate from Q so the next tile's Q can already load) and
//    two TMA stores, not waited for before the next tile (only their smem reads are, before the buffer
//    is rewritten); LSE = m * ln 2 + ln(l) written by the lanes that own each row.
//  - Shared memory: Q 32 KB + K 2 x 32 KB + V 2 x 32 KB + O staging 2 x 16 KB = 192 KB + barriers.
//  - What likely limits it (reasoned, not measured): the softmax (2 x 64 ex2 + FFMAs per thread per
//    KV tile) competing with wgmma issue; a 2-stage ring (no room for a third with the staging
//    buffers); the scheduler's atomic and the first tile's pipeline fill; causal: the diagonal tile
//    is computed in full (half of it masked) by both warpgroups.
#include <ptxbench/abi.h>
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>
#include <ptxkit/wgmma.cuh>

#include <cmath>
#include <string>

namespace {

constexpr bool kCausal = true;
constexpr bool kPingPong = true;  // consumer warpgroups take turns issuing GEMMs

constexpr int kD = 128;          // head dimension
constexpr int kBM = 128;         // query rows per tile (2 consumer warpgroups x 64)
constexpr int kBN = 128;         // keys per KV tile
constexpr int kStages = 2;       // K/V ring depth
constexpr int kThreads = 384;
constexpr int kProducerRegs = 24, kConsumerRegs = 240;
static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= 65536, "register budget of one SM");
static_assert(kBM == kBN, "causal tiling assumes square tiles (the diagonal tile is the last)");

constexpr uint32_t kQBytes = kBM * kD * 2;     // 32 KB: [consumer][d block][64 rows][64 d]
constexpr uint32_t kKVBytes = kBN * kD * 2;    // 32 KB: [d block][128 keys][64 d]
constexpr uint32_t kStageBytes = kBN * 64 * 2; // one 128 x 64 box = 16 KB
constexpr uint32_t kStagingBytes = 64 * kD * 2;  // 16 KB per consumer: [d block][64 rows][64 d]
constexpr uint32_t kOffQ = 0;
constexpr uint32_t kOffK = kOffQ + kQBytes;
constexpr uint32_t kOffV = kOffK + kStages * kKVBytes;
constexpr uint32_t kOffO = kOffV + kStages * kKVBytes;
constexpr uint32_t kOffBar = kOffO + 2 * kStagingBytes;
constexpr uint32_t kNumBars = 2 + 4 * kStages;  // q_full, q_empty, k_full[], k_empty[], v_full[], v_empty[]
constexpr uint32_t kSmemBytes = kOffBar + kNumBars * 8 + 16 + 1024;  // + tile slot + alignment slack
static_assert(kSmemBytes <= 232448, "over the 227 KB of dynamic shared memory an H100 CTA may use");
constexpr uint32_t kEmptyArrivals = 8;  // one per consumer warp
constexpr uint32_t kEpiBar = 1;         // named barriers 1, 2: per-consumer epilogue
constexpr uint32_t kTurnBar = 3;        // named barriers 3, 4: ping-pong turns
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// The dynamic scheduler's counter: tiles claimed beyond the first gridDim.x. run() zeroes it on the
// stream before every launch.
__device__ int g_tile_counter;

// ---- layout helpers (begin) ----
// Pure index math (no device intrinsics), checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
constexpr int kHeadGroup = 4;  // heads per scheduling group
// Byte offset, inside the Q tile, of the 64 x 64 box (consumer c, d block b): [c][b][64][64] bf16.
__host__ __device__ constexpr uint32_t q_box_offset(int c, int b) { return uint32_t(c) * 16384u + uint32_t(b) * 8192u; }
// Byte offset of the start of k16 step kk (0..7, d = 16kk..16kk+15) inside a K-major operand stored as
// two d blocks of `block_bytes`: 4 steps of 32 bytes inside each 128-byte swizzled row.
__host__ __device__ constexpr uint32_t kmajor_step_offset(int kk, uint32_t block_bytes) {
  return uint32_t(kk / 4) * block_bytes + uint32_t(kk % 4) * 32u;
}
// Byte offset of k16 step kk (keys 16kk..16kk+15) inside a V stage ([d block][128 keys][64 d], MN-major
// B of P V): 16 key rows of 128 bytes.
__host__ __device__ constexpr uint32_t v_step_offset(int kk) { return uint32_t(kk) * 16u * 128u; }
// The (query tile, head) of scheduler step t: heads in groups of kHeadGroup (the last group may be
// smaller), inside a group the query tiles in order (longest first when causal), heads fastest.
struct tile_coord {
  int qt, bh;
};
__host__ __device__ constexpr tile_coord tile_of(int t, int n_q, int bh_total, bool causal) {
  const int g0 = (t / (kHeadGroup * n_q)) * kHeadGroup;
  const int gsize = bh_total - g0 < kHeadGroup ? bh_total - g0 : kHeadGroup;
  const int r = t - g0 * n_q;
  const int qi = r / gsize;
  return {causal ? n_q - 1 - qi : qi, g0 + r % gsize};
}
// KV tiles a query tile visits.
__host__ __device__ constexpr int kv_tiles_of(int qt, int n_kv, bool causal) { return causal ? qt + 1 : n_kv; }
// ---- layout helpers (end) ----

// Keeps register-A fragments alive (and in place) until after the wgmma_wait that retires their reader.
__device__ __forceinline__ void fence_frags(uint32_t (&p)[kBN / 16][4]) {
#pragma unroll
  for (int k = 0; k < kBN / 16; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(p[k][r]) :: "memory");
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

// Online softmax on one 64 x kBN score tile in registers (2 rows per thread: h = 0 -> row g, 1 -> g+8).
// Leaves p = exp2(s * scale_log2 - m_new) in s, updates the per-thread partial row sums l and the row
// maxima m (exp2 domain), returns the rescale factors exp2(m_old - m_new) in corr.
__device__ __forceinline__ void online_softmax(float (&s)[kBN / 2], float (&m)[2], float (&l)[2], float (&corr)[2],
                                               float scale_log2) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
    mx = quad_max(mx);
    const float m_new = fmaxf(m[h], mx * scale_log2);
    const float m_use = m_new == -INFINITY ? 0.f : m_new;  // a fully masked row: no -inf - -inf
    corr[h] = ptxkit::exp2_approx(m[h] - m_use);            // 0 while m[h] is -inf
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float p = ptxkit::exp2_approx(fmaf(s[4 * j + 2 * h + e], scale_log2, -m_use));
        s[4 * j + 2 * h + e] = p;
        sum += p;
      }
    l[h] = l[h] * corr[h] + sum;
    m[h] = m_new;
  }
}

__global__ void __launch_bounds__(kThreads, 1)
mha_fwd_kernel(const __grid_constant__ CUtensorMap tma_q, const __grid_constant__ CUtensorMap tma_k,
               const __grid_constant__ CUtensorMap tma_v, const __grid_constant__ CUtensorMap tma_o,
               float* __restrict__ lse, int S, int BH, float scale_log2) {
  using namespace ptxkit;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kOffBar);
  uint64_t* q_full = bars;
  uint64_t* q_empty = bars + 1;
  uint64_t* k_full = bars + 2;
  uint64_t* k_empty = k_full + kStages;
  uint64_t* v_full = k_empty + kStages;
  uint64_t* v_empty = v_full + kStages;
  volatile int* tile_slot = reinterpret_cast<volatile int*>(smem + kOffBar + kNumBars * 8);

  const int n_q = S / kBM, n_kv = S / kBN, num_tiles = n_q * BH;

  if (threadIdx.x == 0) {
    mbar_init(q_full, 1);
    mbar_init(q_empty, kEmptyArrivals);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&k_full[s], 1);
      mbar_init(&k_empty[s], kEmptyArrivals);
      mbar_init(&v_full[s], 1);
      mbar_init(&v_empty[s], kEmptyArrivals);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: roles diverge below

  const uint32_t wg = warpgroup_id();
  if (wg == 0) {
    // ---------------- producer: one thread claims tiles and issues every TMA load ----------------
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tma_q);
      prefetch_tensormap(&tma_k);
      prefetch_tensormap(&tma_v);
      prefetch_tensormap(&tma_o);
      ring_pos<kStages> kv;
      ring_pos<1> qp;
      int tile = blockIdx.x;
#pragma unroll 1
      for (;;) {
        mbar_wait(q_empty, qp.phase ^ 1);  // the consumers' last S GEMM of the previous tile is done
        *tile_slot = tile;                 // published by the arrive below (release), read after q_full
        if (tile >= num_tiles) {
          mbar_arrive(q_full);             // no more tiles: the consumers see the sentinel and stop
          break;
        }
        const tile_coord tc = tile_of(tile, n_q, BH, kCausal);
        const int q_row = tc.bh * S + tc.qt * kBM, kv_row = tc.bh * S;
        mbar_arrive_expect_tx(q_full, kQBytes);
#pragma unroll
        for (int c = 0; c < 2; ++c)
#pragma unroll
          for (int b = 0; b < 2; ++b) tma_load_2d(smem + kOffQ + q_box_offset(c, b), &tma_q, q_full, 64 * b, q_row + 64 * c);
        const int kv_count = kv_tiles_of(tc.qt, n_kv, kCausal);
#pragma unroll 1
        for (int j = 0; j < kv_count; ++j) {
          uint8_t* ks = smem + kOffK + kv.index * kKVBytes;
          uint8_t* vs = smem + kOffV + kv.index * kKVBytes;
          mbar_wait(&k_empty[kv.index], kv.phase ^ 1);
          mbar_arrive_expect_tx(&k_full[kv.index], kKVBytes);
          tma_load_2d(ks, &tma_k, &k_full[kv.index], 0, kv_row + j * kBN);
          tma_load_2d(ks + kStageBytes, &tma_k, &k_full[kv.index], 64, kv_row + j * kBN);
          mbar_wait(&v_empty[kv.index], kv.phase ^ 1);
          mbar_arrive_expect_tx(&v_full[kv.index], kKVBytes);
          tma_load_2d(vs, &tma_v, &v_full[kv.index], 0, kv_row + j * kBN);
          tma_load_2d(vs + kStageBytes, &tma_v, &v_full[kv.index], 64, kv_row + j * kBN);
          kv.advance();
        }
        // Claim the next tile now, about two KV tiles before the consumers free the Q buffer.
        tile = static_cast<int>(gridDim.x) + atomicAdd(&g_tile_counter, 1);
        qp.advance();
      }
    }
    __syncwarp();
    return;
  }

  // ---------------- consumers: warpgroup c owns query rows 64c .. 64c+63 of the tile ----------------
  setmaxnreg_inc<kConsumerRegs>();
  const uint32_t c = wg - 1;
  const uint32_t lane = threadIdx.x % 32;
  const bool wg_leader = threadIdx.x % 128 == 0;
  uint8_t* staging = smem + kOffO + c * kStagingBytes;
  const uint8_t* q_tile = smem + kOffQ + q_box_offset(static_cast<int>(c), 0);
  auto release = [&](uint64_t* bar) {
    if (lane == 0) mbar_arrive(bar);
  };
  auto turn_begin = [&] {
    if constexpr (kPingPong) named_barrier_sync<256>(kTurnBar + c);
  };
  auto turn_end = [&] {
    if constexpr (kPingPong) named_barrier_arrive<256>(kTurnBar + (c ^ 1));
  };
  // S = Q K^T for the K tile in ring slot `slot` (8 k-steps over d; the first one overwrites S).
  auto issue_qk = [&](float(&s)[kBN / 2], uint32_t slot) {
    const uint8_t* ks = smem + kOffK + slot * kKVBytes;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const uint64_t dq = make_desc_k_major<swizzle::b128>(q_tile + kmajor_step_offset(kk, 8192));
      const uint64_t dk = make_desc_k_major<swizzle::b128>(ks + kmajor_step_offset(kk, kStageBytes));
      wgmma_m64n128k16_ss(s, dq, dk, kk > 0 ? 1 : 0);
    }
  };
  // O += P V for the V tile in ring slot `slot` (8 k-steps over the keys; V is the MN-major B).
  auto issue_pv = [&](float(&o)[kD / 2], const uint32_t(&p)[kBN / 16][4], uint32_t slot) {
    const uint64_t dv = make_desc_mn_major<swizzle::b128>(smem + kOffV + slot * kKVBytes, kStageBytes);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) wgmma_m64n128k16_rs<1>(o, p[kk], desc_advance(dv, v_step_offset(kk)), 1);
  };

  if constexpr (kPingPong) {
    if (c == 1) named_barrier_arrive<256>(kTurnBar + 0);  // consumer 0 takes the first turn
  }

  ring_pos<kStages> kv;
  ring_pos<1> qp;
#pragma unroll 1
  for (;;) {
    mbar_wait(q_full, qp.phase);
    const int tile = *tile_slot;
    if (tile >= num_tiles) break;
    const tile_coord tc = tile_of(tile, n_q, BH, kCausal);
    const int kv_count = kv_tiles_of(tc.qt, n_kv, kCausal);
    const int row0 = tc.bh * S + tc.qt * kBM + 64 * static_cast<int>(c);  // first query row (flattened)

    float o[kD / 2];
#pragma unroll
    for (int i = 0; i < kD / 2; ++i) o[i] = 0.f;
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, corr[2];
    float s[kBN / 2];
    uint32_t p[kBN / 16][4];

    // Diagonal tile (causal): key k of the tile is masked for query row r of the tile when k > r.
    auto mask_diagonal = [&](float(&sc)[kBN / 2]) {
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i)
        if (static_cast<int>(acc_col(i)) > 64 * static_cast<int>(c) + static_cast<int>(acc_row(i))) sc[i] = -INFINITY;
    };

    // KV tile 0: S_0 alone.
    turn_begin();
    mbar_wait(&k_full[kv.index], kv.phase);
    fence_regs(s);
    wgmma_fence();
    issue_qk(s, kv.index);
    wgmma_commit();
    turn_end();
    wgmma_wait<0>();
    fence_regs(s);
    release(&k_empty[kv.index]);
    if (kv_count == 1) release(q_empty);
    if (kCausal && kv_count == 1) mask_diagonal(s);
    online_softmax(s, m, l, corr, scale_log2);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) acc_to_a_frag(s, kk, p[kk]);
    ring_pos<kStages> prev = kv;
    kv.advance();

#pragma unroll 1
    for (int j = 1; j < kv_count; ++j) {
      turn_begin();
      mbar_wait(&k_full[kv.index], kv.phase);
      mbar_wait(&v_full[prev.index], prev.phase);  // V_{j-1}, loaded one iteration ago
      fence_regs(s);
      fence_regs(o);
      fence_frags(p);
      wgmma_fence();  // orders the softmax's writes of s, o and p before the wgmmas read them
      issue_qk(s, kv.index);  // S_j
      wgmma_commit();
      issue_pv(o, p, prev.index);  // O += P_{j-1} V_{j-1}
      wgmma_commit();
      turn_end();
      wgmma_wait<1>();  // S_j is done; the PV GEMM may still run
      fence_regs(s);
      release(&k_empty[kv.index]);
      if (j == kv_count - 1) release(q_empty);  // the last read of this tile's Q
      if (kCausal && j == kv_count - 1) mask_diagonal(s);
      online_softmax(s, m, l, corr, scale_log2);
      wgmma_wait<0>();  // O now includes P_{j-1} V_{j-1}; p and V_{j-1} are free
      fence_regs(o);
      fence_frags(p);
      release(&v_empty[prev.index]);
#pragma unroll
      for (int i = 0; i < kD / 2; ++i) o[i] *= corr[(i >> 1) & 1];
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) acc_to_a_frag(s, kk, p[kk]);
      prev = kv;
      kv.advance();
    }

    // The last PV GEMM.
    turn_begin();
    mbar_wait(&v_full[prev.index], prev.phase);
    fence_regs(o);
    fence_frags(p);
    wgmma_fence();
    issue_pv(o, p, prev.index);
    wgmma_commit();
    turn_end();
    wgmma_wait<0>();
    fence_regs(o);
    fence_frags(p);
    release(&v_empty[prev.index]);

    // Epilogue: O / l -> bf16 -> staging (stmatrix, 128-byte swizzle) -> two TMA stores; LSE.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
      l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    const float inv[2] = {1.f / l[0], 1.f / l[1]};
#pragma unroll
    for (int i = 0; i < kD / 2; ++i) o[i] *= inv[(i >> 1) & 1];
    if (wg_leader) bulk_wait_group_read<0>();  // the previous tile's stores have read the staging buffer
    named_barrier_sync<128>(kEpiBar + c);
    stmatrix_acc_bf16<64, swizzle::b128>(*reinterpret_cast<const float(*)[32]>(&o[0]), staging);
    stmatrix_acc_bf16<64, swizzle::b128>(*reinterpret_cast<const float(*)[32]>(&o[32]), staging + 8192);
    fence_proxy_async_smem();
    named_barrier_sync<128>(kEpiBar + c);
    if (wg_leader) {
      tma_store_2d(&tma_o, staging, 0, row0);
      tma_store_2d(&tma_o, staging + 8192, 64, row0);
      bulk_commit_group();
    }
    if (threadIdx.x % 4 == 0) {
      lse[row0 + acc_row(0)] = m[0] * kLn2 + logf(l[0]);
      lse[row0 + acc_row(2)] = m[1] * kLn2 + logf(l[1]);
    }
    qp.advance();
  }
  if constexpr (kPingPong) {
    if (c == 0) named_barrier_sync<256>(kTurnBar + 0);  // matches consumer 1's last arrive
  }
  if (wg_leader) bulk_wait_group<0>();  // the last stores are complete before the CTA exits
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void run(ptxbench::tensor_view Q, ptxbench::tensor_view K, ptxbench::tensor_view V, ptxbench::tensor_view O,
         ptxbench::tensor_view LSE, cudaStream_t stream) {
  for (const auto* t : {&Q, &K, &V, &O})
    if (t->ndim() != 4 || !t->is_contiguous()) throw ptxbench::shape_error("Q, K, V and O must be contiguous [B, H, S, D]");
  if (LSE.ndim() != 3 || !LSE.is_contiguous()) throw ptxbench::shape_error("LSE must be contiguous [B, H, S]");
  const int64_t B = Q.size(0), H = Q.size(1), S = Q.size(2), D = Q.size(3);
  for (const auto* t : {&K, &V, &O})
    if (t->size(0) != B || t->size(1) != H || t->size(2) != S || t->size(3) != D)
      throw ptxbench::shape_error("Q, K, V and O must have the same shape");
  if (LSE.size(0) != B || LSE.size(1) != H || LSE.size(2) != S) throw ptxbench::shape_error("LSE must be [B, H, S]");
  if (D != kD) throw ptxbench::shape_error("this kernel supports head dimension 128 only");
  if (B <= 0 || H <= 0 || S <= 0 || S % kBM != 0) throw ptxbench::shape_error("this kernel needs S to be a positive multiple of 128");
  if (B * H * S >= (int64_t(1) << 31)) throw ptxbench::shape_error("B*H*S too large for 32-bit TMA coordinates");

  using ptxkit::swizzle;
  const uint64_t rows = static_cast<uint64_t>(B * H * S);
  const CUtensorMap tq = ptxkit::make_tma_2d_bf16(Q.data_ptr(), rows, kD, kD, 64, 64, swizzle::b128);
  const CUtensorMap tk = ptxkit::make_tma_2d_bf16(K.data_ptr(), rows, kD, kD, kBN, 64, swizzle::b128);
  const CUtensorMap tv = ptxkit::make_tma_2d_bf16(V.data_ptr(), rows, kD, kD, kBN, 64, swizzle::b128);
  const CUtensorMap to = ptxkit::make_tma_2d_bf16(O.data_ptr(), rows, kD, kD, 64, 64, swizzle::b128);

  // Once per process: enable the shared memory, count the SMs, find the scheduler counter.
  struct setup {
    int sms;
    void* counter;
  };
  static const setup once = [] {
    check_cuda(cudaFuncSetAttribute(mha_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes),
               "cudaFuncSetAttribute(max dynamic shared memory)");
    int device = 0, sms = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    void* counter = nullptr;
    check_cuda(cudaGetSymbolAddress(&counter, g_tile_counter), "cudaGetSymbolAddress(tile counter)");
    return setup{sms > 0 ? sms : 132, counter};
  }();

  const int BH = static_cast<int>(B * H), n_q = static_cast<int>(S / kBM);
  const int64_t num_tiles = static_cast<int64_t>(BH) * n_q;
  const int grid = static_cast<int>(num_tiles < once.sms ? num_tiles : once.sms);
  const float scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D))) * kLog2e;
  check_cuda(cudaMemsetAsync(once.counter, 0, sizeof(int), stream), "zeroing the tile counter");
  mha_fwd_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tq, tk, tv, to, LSE.data<float>(), static_cast<int>(S), BH,
                                                         scale_log2);
  check_cuda(cudaGetLastError(), "launching mha_fwd_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT32)
