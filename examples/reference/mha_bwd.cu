// Reference kernel (issue 30) for task mha_bwd_d128: the attention backward. Inputs Q, K, V, O, dO
// [B, H, S, 128] bf16 contiguous and L [B, H, S] fp32 (the forward's natural-log LSE); outputs dQ, dK,
// dV bf16; scale 1/sqrt(128). With P = exp(scale * Q K^T - L): dV = P^T dO, dP = dO V^T,
// dS = P * (dP - Dsum) with Dsum = rowsum(dO * O), dQ = scale * dS K, dK = scale * dS^T Q.
// mha_bwd_causal.cu is this file with kCausal = true (query i sees keys j <= i, top-left aligned).
// Written only with #includes of the sm90a knowledge pack (ptxkit/*.cuh) and <ptxbench/abi.h>; it
// follows packs/sm90a/patterns/fa3_bwd.md's dK/dV kernel but fuses dQ into it (the pattern's
// "fused single-kernel variant": dQ partials added with tma_reduce_add_2d into an fp32 buffer), and
// reuses examples/reference/gemm_persistent.cu's ring and setmaxnreg and mha_fwd.cu's descriptors.
//
// Status: on an H100 (bench/results/h100/reference/, session 7; bench/eval/reference.sh: every gate,
// three evaluations in one harness) 0.880x cuDNN plain (8.27 ms vs 7.27-7.29 ms), 0.909x causal
// (4.62 ms vs 4.19-4.20 ms), goal 0.60x; all PASSED and target-correct (GMMA and TMA executed),
// memcheck clean; the correctness test (tests/gpu/reference_attention_bwd_test.cu) passed 4 of 4 for
// each. The design notes below are reasoned; only those totals are measured.
//
// Design:
//  - Three kernels on the stream. (1) preprocess: one warp per query row writes Dsum = rowsum(dO * O)
//    and L * log2(e) (fp32) into scratch and zeroes that row's 128 floats of the fp32 dQ accumulator.
//    (2) the main kernel below. (3) convert: dQ accumulator * scale -> bf16 dQ.
//  - Scratch: one device buffer that run() allocates on first use (cudaMalloc) and keeps, grown when a
//    call needs more (4 * B*H*S*(128 + 2) bytes: 403 MB at the task's shape). Nothing in it survives
//    between calls that matters: the preprocess kernel rewrites all of it every call.
//  - Main kernel: grid (S/128 KV tiles, B*H), one CTA per 128 keys of one head (1 CTA/SM by smem),
//    KV tile fastest so the ~132 resident CTAs share a few heads' Q/dO in L2. CTA = 3 warpgroups:
//    warpgroup 0 = producer (setmaxnreg 24; one thread issues every TMA): K_j, V_j once (128 keys x
//    128 d each, two 128x64 boxes, 128-byte swizzle), then per query tile of 64 rows {Q_i, dO_i (two
//    64x64 boxes each), L2_i, Dsum_i (256-byte bulk copies)} through a kStages ring (full/empty
//    mbarriers, 8 consumer-warp arrivals free a slot). Warpgroups 1, 2 = consumers (setmaxnreg 240),
//    each owning 64 of the 128 keys, working in the transposed orientation (rows = keys):
//      G1  S^T  = K_c Q_i^T     m64n64k16 ss, 8 k-steps over d (both K-major)
//      G2  dP^T = V_c dO_i^T    m64n64k16 ss, issued right after G1
//          P^T  = exp2(S^T * scale*log2e - L2[q]) (diagonal tiles masked) -> bf16 A fragments
//      G3  dV  += P^T dO_i      m64n128k16 rs, dO_i as MN-major B (TransB = 1), 4 k-steps over q
//          dS^T = P^T * (dP^T - Dsum[q]) (G3 runs meanwhile) -> bf16 fragments and, by stmatrix, into
//                 a [128 keys][64 q] smem tile (double-buffered; each warpgroup writes its 64 rows)
//      G4  dK  += dS^T Q_i      m64n128k16 rs, Q_i as MN-major B
//          named barrier (both warpgroups' dS^T rows are in smem)
//      G5  dQ_i[:, 64c..] = dS K_j[:, 64c..]  m64n64k16 ss with dS^T as an MN-major A (TransA = 1) and
//                 K_j's d block c as an MN-major B; 8 k-steps over the 128 keys; warpgroup c owns d
//                 columns 64c..64c+63 of the query tile's dQ partial
//          wait G3, G4 -> release the ring slot; wait G5 -> dQ partial (fp32) into a 16 KB staging
//          buffer in the accumulator's register order (float4 per thread, conflict-free) -> one
//          tma_reduce_add_2d (cp.reduce.async.bulk.tensor add.f32) into the fp32 accumulator, whose
//          layout is that register order (the convert kernel undoes it), so the box is contiguous.
//    End: dK * scale and dV as bf16 straight from the accumulators (store_acc_bf16).
//  - Query tile order: causal, from the diagonal tile (2j) to the end, masking only tiles 2j, 2j+1;
//    non-causal, rotated to start at 2j too, so the CTAs of one head add into different dQ tiles.
//  - Registers per consumer thread: dK + dV accumulators 128, S^T and dP^T 64, P^T/dS^T bf16
//    fragments 32, dQ 32 (live only after S^T, dP^T are dead): ~208 at the peak; 240 allowed.
//  - Shared memory: K, V 64 KB + ring kStages x 33 KB + dS^T 2 x 16 KB + dQ staging 2 x 16 KB.
//  - What likely limits it (reasoned, not measured): no overlap across iterations inside a warpgroup
//    and no ping-pong between the two (they meet at the dS barrier each iteration), so the tensor
//    cores idle during the exp2/dS math and the dQ staging; G1, G2 and G5 are N = 64 with both
//    operands from smem (smem-bandwidth bound shapes); the dQ reduce-add traffic into L2 (32 KB per
//    CTA per query tile). Next steps: keep dQ's staging for the next iteration (issue G1/G2 first),
//    ping-pong the two warpgroups, 3 ring stages (smem allows it), a persistent scheduler.
//  - Numerics: P and dS rounded to bf16 only as MMA inputs; fp32 accumulation everywhere.
#include <ptxbench/abi.h>
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>
#include <ptxkit/wgmma.cuh>

#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <string>

namespace {

constexpr bool kCausal = false;

// ---- layout helpers (begin) ----
// Pure index math (no device intrinsics), checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
constexpr int kD = 128;   // head dimension
constexpr int kBN = 128;  // keys per CTA (2 consumer warpgroups x 64)
constexpr int kBM = 64;   // query rows per ring stage
constexpr int kDqChunk = 64 * 64;  // floats of one warpgroup's dQ partial (64 queries x 64 d)
// Byte offset of k16 step kk (0..7, d = 16kk..16kk+15) inside a K-major operand stored as two d blocks of
// `block_bytes`: 4 steps of 32 bytes inside each 128-byte swizzled row.
__host__ __device__ constexpr uint32_t kmajor_step_offset(int kk, uint32_t block_bytes) {
  return uint32_t(kk / 4) * block_bytes + uint32_t(kk % 4) * 32u;
}
// Byte offset of k16 step kk inside an MN-major operand with 128-byte rows (16 K-rows of 128 bytes).
__host__ __device__ constexpr uint32_t mn_step_offset(int kk) { return uint32_t(kk) * 16u * 128u; }
// Query tiles (of kBM rows) that KV tile j visits, and the it-th of them: from the diagonal tile on;
// non-causal wraps around, so every CTA still visits all n_q tiles.
__host__ __device__ constexpr int q_tiles_of(int j, int n_q, bool causal) { return causal ? n_q - j * (kBN / kBM) : n_q; }
__host__ __device__ constexpr int q_tile_of(int j, int it, int n_q, bool causal) {
  return causal ? j * (kBN / kBM) + it : (j * (kBN / kBM) + it) % n_q;
}
// Causal: only the first kBN/kBM visited tiles overlap the diagonal; a key after the query is masked.
__host__ __device__ constexpr bool needs_mask(int it, bool causal) { return causal && it < kBN / kBM; }
// Row / column of accumulator register r of warpgroup thread t in an m64nN tile (= ptxkit acc_row/acc_col).
__host__ __device__ constexpr int acc_row_of(int t, int r) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((r >> 1) & 1); }
__host__ __device__ constexpr int acc_col_of(int t, int r) { return (r >> 2) * 8 + (t % 4) * 2 + (r & 1); }
// The fp32 dQ accumulator: chunks of kDqChunk floats, chunk ((bh * n_q + qt) * 2 + c) holding the
// 64 x 64 block (query tile qt, d columns 64c..64c+63) in register order: thread t's registers
// 4k..4k+3 at floats ((k * 128 + t) * 4 ..+3), so each warp's float4s are contiguous.
__host__ __device__ constexpr int64_t dq_chunk(int bh, int qt, int c, int n_q) { return (int64_t(bh) * n_q + qt) * 2 + c; }
__host__ __device__ constexpr int dq_float(int t, int r) { return ((r / 4) * 128 + t) * 4 + r % 4; }
// The accumulator viewed by the reduce-add's tensor map as rows of 128 floats: a chunk is 32 rows.
constexpr int kDqBoxRows = kDqChunk / 128;
// ---- layout helpers (end) ----

constexpr int kStages = 2;     // Q/dO ring depth (3 also fits in shared memory)
constexpr int kThreads = 384;
constexpr int kProducerRegs = 24, kConsumerRegs = 240;
static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= 65536, "register budget of one SM");

constexpr uint32_t kKVBytes = kBN * kD * 2;     // 32 KB: [d block][128 keys][64 d]
constexpr uint32_t kKVBlock = kBN * 64 * 2;     // 16 KB: one 128 x 64 box
constexpr uint32_t kQBytes = kBM * kD * 2;      // 16 KB: [d block][64 q][64 d]
constexpr uint32_t kQBlock = kBM * 64 * 2;      // 8 KB: one 64 x 64 box
constexpr uint32_t kDsBytes = kBN * kBM * 2;    // 16 KB: dS^T [128 keys][64 q], 128-byte swizzle
constexpr uint32_t kDqBytes = kDqChunk * 4;     // 16 KB
constexpr uint32_t kStatBytes = kBM * 4;        // 256 B: L2 or Dsum of one query tile
constexpr uint32_t kOffK = 0;
constexpr uint32_t kOffV = kOffK + kKVBytes;
constexpr uint32_t kOffQ = kOffV + kKVBytes;
constexpr uint32_t kOffDO = kOffQ + kStages * kQBytes;
constexpr uint32_t kOffDS = kOffDO + kStages * kQBytes;
constexpr uint32_t kOffDQ = kOffDS + 2 * kDsBytes;
constexpr uint32_t kOffL2 = kOffDQ + 2 * kDqBytes;
constexpr uint32_t kOffDsum = kOffL2 + kStages * kStatBytes;
constexpr uint32_t kOffBar = kOffDsum + kStages * kStatBytes;
constexpr uint32_t kNumBars = 1 + 2 * kStages;  // kv_full, full[], empty[]
constexpr uint32_t kSmemBytes = kOffBar + kNumBars * 8 + 1024;  // + alignment slack
static_assert(kSmemBytes <= 232448, "over the 227 KB of dynamic shared memory an H100 CTA may use");
constexpr uint32_t kStageTx = 2 * kQBytes + 2 * kStatBytes;
constexpr uint32_t kEmptyArrivals = 8;  // one per consumer warp
constexpr uint32_t kDsBar = 1;          // named barrier 1: both consumers (256 threads)
constexpr uint32_t kDqBar = 2;          // named barriers 2, 3: one consumer's dQ staging
constexpr float kLog2e = 1.4426950408889634f;


__device__ __forceinline__ void fence_frags(uint32_t (&p)[kBM / 16][4]) {
#pragma unroll
  for (int k = 0; k < kBM / 16; ++k)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(p[k][r]) :: "memory");
}

// (1) Dsum = rowsum(dO * O), L2 = L * log2(e); zeroes the row's 128 floats of the dQ accumulator.
__global__ void __launch_bounds__(256) bwd_preprocess_kernel(const __nv_bfloat16* __restrict__ O,
                                                             const __nv_bfloat16* __restrict__ dO,
                                                             const float* __restrict__ L, float* __restrict__ dsum,
                                                             float* __restrict__ lse2, float* __restrict__ dq_acc,
                                                             int64_t rows) {
  const int64_t row = int64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint2 ov = *reinterpret_cast<const uint2*>(O + row * kD + lane * 4);
  const uint2 dv = *reinterpret_cast<const uint2*>(dO + row * kD + lane * 4);
  const __nv_bfloat16* o = reinterpret_cast<const __nv_bfloat16*>(&ov);
  const __nv_bfloat16* d = reinterpret_cast<const __nv_bfloat16*>(&dv);
  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < 4; ++e) sum += __bfloat162float(o[e]) * __bfloat162float(d[e]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  *reinterpret_cast<float4*>(dq_acc + row * kD + lane * 4) = make_float4(0.f, 0.f, 0.f, 0.f);
  if (lane == 0) {
    dsum[row] = sum;
    lse2[row] = L[row] * kLog2e;
  }
}

// (3) dQ = scale * accumulator, back from register order to [row][d]; one 128-thread CTA per chunk.
__global__ void __launch_bounds__(128) bwd_convert_dq_kernel(const float* __restrict__ dq_acc,
                                                             __nv_bfloat16* __restrict__ dQ, int S, float scale) {
  const int n_q = S / kBM;
  const int64_t chunk = blockIdx.x;
  const int c = static_cast<int>(chunk % 2);
  const int qt = static_cast<int>((chunk / 2) % n_q);
  const int64_t bh = chunk / (2 * n_q);
  const int t = threadIdx.x;
  const float* src = dq_acc + chunk * kDqChunk;
  __nv_bfloat16* dst = dQ + (bh * S + int64_t(qt) * kBM) * kD + 64 * c;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float4 v = *reinterpret_cast<const float4*>(src + dq_float(t, 4 * k));
    const int col = acc_col_of(t, 4 * k);
    const int r0 = acc_row_of(t, 4 * k), r1 = acc_row_of(t, 4 * k + 2);
    *reinterpret_cast<__nv_bfloat162*>(dst + r0 * kD + col) = __floats2bfloat162_rn(v.x * scale, v.y * scale);
    *reinterpret_cast<__nv_bfloat162*>(dst + r1 * kD + col) = __floats2bfloat162_rn(v.z * scale, v.w * scale);
  }
}

// (2) dK, dV of 128 keys of one head, and this CTA's dQ partials.
__global__ void __launch_bounds__(kThreads, 1)
mha_bwd_kernel(const __grid_constant__ CUtensorMap tma_q, const __grid_constant__ CUtensorMap tma_k,
               const __grid_constant__ CUtensorMap tma_v, const __grid_constant__ CUtensorMap tma_do,
               const __grid_constant__ CUtensorMap tma_dq, const float* __restrict__ lse2,
               const float* __restrict__ dsum, __nv_bfloat16* __restrict__ dK, __nv_bfloat16* __restrict__ dV, int S,
               float scale_log2, float scale) {
  using namespace ptxkit;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kOffBar);
  uint64_t* kv_full = bars;
  uint64_t* full = bars + 1;
  uint64_t* empty = full + kStages;

  const int n_q = S / kBM;
  const int j = blockIdx.x;   // KV tile
  const int bh = blockIdx.y;  // batch * heads
  const int n_it = q_tiles_of(j, n_q, kCausal);

  if (threadIdx.x == 0) {
    mbar_init(kv_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kEmptyArrivals);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last CTA-wide barrier: roles diverge below

  const uint32_t wg = warpgroup_id();
  if (wg == 0) {
    // ---------------- producer: one thread issues every TMA load ----------------
    setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tma_q);
      prefetch_tensormap(&tma_k);
      prefetch_tensormap(&tma_v);
      prefetch_tensormap(&tma_do);
      prefetch_tensormap(&tma_dq);
      const int kv_row = bh * S + j * kBN;
      mbar_arrive_expect_tx(kv_full, 2 * kKVBytes);
      tma_load_2d(smem + kOffK, &tma_k, kv_full, 0, kv_row);
      tma_load_2d(smem + kOffK + kKVBlock, &tma_k, kv_full, 64, kv_row);
      tma_load_2d(smem + kOffV, &tma_v, kv_full, 0, kv_row);
      tma_load_2d(smem + kOffV + kKVBlock, &tma_v, kv_full, 64, kv_row);
      ring_pos<kStages> pos;
#pragma unroll 1
      for (int it = 0; it < n_it; ++it) {
        const int q_row = bh * S + q_tile_of(j, it, n_q, kCausal) * kBM;
        const uint32_t s = pos.index;
        mbar_wait(&empty[s], pos.phase ^ 1);  // slot free (the first round passes at once)
        mbar_arrive_expect_tx(&full[s], kStageTx);
        uint8_t* qs = smem + kOffQ + s * kQBytes;
        uint8_t* dos = smem + kOffDO + s * kQBytes;
        tma_load_2d(qs, &tma_q, &full[s], 0, q_row);
        tma_load_2d(qs + kQBlock, &tma_q, &full[s], 64, q_row);
        tma_load_2d(dos, &tma_do, &full[s], 0, q_row);
        tma_load_2d(dos + kQBlock, &tma_do, &full[s], 64, q_row);
        bulk_copy_g2s(smem + kOffL2 + s * kStatBytes, lse2 + q_row, kStatBytes, &full[s]);
        bulk_copy_g2s(smem + kOffDsum + s * kStatBytes, dsum + q_row, kStatBytes, &full[s]);
        pos.advance();
      }
    }
    __syncwarp();
    return;
  }

  // ---------------- consumers: warpgroup c owns keys 64c .. 64c+63 of the KV tile ----------------
  setmaxnreg_inc<kConsumerRegs>();
  const uint32_t c = wg - 1;
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t t = threadIdx.x % 128;
  const bool wg_leader = t == 0;
  const uint8_t* k_rows = smem + kOffK + c * (kKVBlock / 2);  // this warpgroup's 64 keys in d block 0
  const uint8_t* v_rows = smem + kOffV + c * (kKVBlock / 2);
  float* staging = reinterpret_cast<float*>(smem + kOffDQ + c * kDqBytes);
  const int key0 = j * kBN + 64 * static_cast<int>(c);  // first key of this warpgroup (within the head)

  float dk[kD / 2], dv[kD / 2];
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) dk[i] = dv[i] = 0.f;

  mbar_wait(kv_full, 0);
  ring_pos<kStages> pos;
#pragma unroll 1
  for (int it = 0; it < n_it; ++it) {
    const int qt = q_tile_of(j, it, n_q, kCausal);
    const uint32_t s = pos.index;
    const uint8_t* qs = smem + kOffQ + s * kQBytes;
    const uint8_t* dos = smem + kOffDO + s * kQBytes;
    const float* l2s = reinterpret_cast<const float*>(smem + kOffL2 + s * kStatBytes);
    const float* dss = reinterpret_cast<const float*>(smem + kOffDsum + s * kStatBytes);
    uint8_t* ds_tile = smem + kOffDS + (it & 1) * kDsBytes;

    mbar_wait(&full[s], pos.phase);
    float st[kBM / 2], dpt[kBM / 2];
    fence_regs(st);
    fence_regs(dpt);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)  // G1: S^T = K_c Q^T
      wgmma_m64n64k16_ss(st, make_desc_k_major<swizzle::b128>(k_rows + kmajor_step_offset(kk, kKVBlock)),
                         make_desc_k_major<swizzle::b128>(qs + kmajor_step_offset(kk, kQBlock)), kk > 0 ? 1 : 0);
    wgmma_commit();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)  // G2: dP^T = V_c dO^T
      wgmma_m64n64k16_ss(dpt, make_desc_k_major<swizzle::b128>(v_rows + kmajor_step_offset(kk, kKVBlock)),
                         make_desc_k_major<swizzle::b128>(dos + kmajor_step_offset(kk, kQBlock)), kk > 0 ? 1 : 0);
    wgmma_commit();
    wgmma_wait<1>();  // G1 done
    fence_regs(st);

    // P^T = exp2(S^T * scale * log2e - L2[q]); rows are keys, columns queries.
#pragma unroll
    for (int i = 0; i < kBM / 2; ++i) st[i] = exp2_approx(fmaf(st[i], scale_log2, -l2s[acc_col(i)]));
    if (needs_mask(it, kCausal)) {
#pragma unroll
      for (int i = 0; i < kBM / 2; ++i)
        if (key0 + static_cast<int>(acc_row(i)) > qt * kBM + static_cast<int>(acc_col(i))) st[i] = 0.f;
    }
    uint32_t pf[kBM / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBM / 16; ++kk) acc_to_a_frag(st, kk, pf[kk]);
    fence_regs(dv);
    fence_frags(pf);
    wgmma_fence();
    {
      const uint64_t d_do = make_desc_mn_major<swizzle::b128>(dos, kQBlock);
#pragma unroll
      for (int kk = 0; kk < kBM / 16; ++kk)  // G3: dV += P^T dO
        wgmma_m64n128k16_rs<1>(dv, pf[kk], desc_advance(d_do, mn_step_offset(kk)), 1);
    }
    wgmma_commit();
    wgmma_wait<1>();  // G2 done (G3 may still run)
    fence_regs(dpt);

    // dS^T = P^T * (dP^T - Dsum[q]).
#pragma unroll
    for (int i = 0; i < kBM / 2; ++i) dpt[i] = st[i] * (dpt[i] - dss[acc_col(i)]);
    uint32_t sf[kBM / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBM / 16; ++kk) acc_to_a_frag(dpt, kk, sf[kk]);
    fence_regs(dk);
    fence_frags(sf);
    wgmma_fence();
    {
      const uint64_t d_q = make_desc_mn_major<swizzle::b128>(qs, kQBlock);
#pragma unroll
      for (int kk = 0; kk < kBM / 16; ++kk)  // G4: dK += dS^T Q
        wgmma_m64n128k16_rs<1>(dk, sf[kk], desc_advance(d_q, mn_step_offset(kk)), 1);
    }
    wgmma_commit();
    // dS^T rows of this warpgroup into the shared [128 keys][64 q] tile (the A of G5, MN-major).
    stmatrix_acc_bf16<kBM, swizzle::b128>(dpt, ds_tile + c * (kDsBytes / 2));
    fence_proxy_async_smem();
    named_barrier_sync<256>(kDsBar);

    float dq[kBM / 2];
    fence_regs(dq);
    wgmma_fence();
    {
      const uint64_t d_ds = make_desc_mn_major<swizzle::b128>(ds_tile, kDsBytes);
      const uint64_t d_k = make_desc_mn_major<swizzle::b128>(smem + kOffK + c * kKVBlock, kKVBlock);
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk)  // G5: dQ[:, 64c..] = dS K[:, 64c..]
        wgmma_m64n64k16_ss<1, 1>(dq, desc_advance(d_ds, mn_step_offset(kk)), desc_advance(d_k, mn_step_offset(kk)),
                                 kk > 0 ? 1 : 0);
    }
    wgmma_commit();
    wgmma_wait<1>();  // G3, G4 done: this stage's Q, dO, L2, Dsum are no longer read
    fence_regs(dv);
    fence_regs(dk);
    fence_frags(pf);
    fence_frags(sf);
    if (lane == 0) mbar_arrive(&empty[s]);
    wgmma_wait<0>();  // G5 done
    fence_regs(dq);

    // dQ partial -> staging (register order) -> reduce-add into the fp32 accumulator.
    if (wg_leader) bulk_wait_group_read<0>();  // the previous reduce has read the staging buffer
    named_barrier_sync<128>(kDqBar + c);
#pragma unroll
    for (int k = 0; k < kBM / 8; ++k)
      *reinterpret_cast<float4*>(staging + dq_float(static_cast<int>(t), 4 * k)) =
          make_float4(dq[4 * k], dq[4 * k + 1], dq[4 * k + 2], dq[4 * k + 3]);
    fence_proxy_async_smem();
    named_barrier_sync<128>(kDqBar + c);
    if (wg_leader) {
      tma_reduce_add_2d(&tma_dq, staging, 0, static_cast<int32_t>(dq_chunk(bh, qt, static_cast<int>(c), n_q) * kDqBoxRows));
      bulk_commit_group();
    }
    pos.advance();
  }

  // dK = scale * sum dS^T Q, dV: bf16 straight from the accumulators.
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) dk[i] *= scale;
  const int64_t out_row = int64_t(bh) * S + key0;
  store_acc_bf16(dk, dK + out_row * kD, kD, 64, kD);
  store_acc_bf16(dv, dV + out_row * kD, kD, 64, kD);
  if (wg_leader) bulk_wait_group<0>();  // the last reduce-add is complete before the CTA exits
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void run(ptxbench::tensor_view Q, ptxbench::tensor_view K, ptxbench::tensor_view V, ptxbench::tensor_view O,
         ptxbench::tensor_view dO, ptxbench::tensor_view L, ptxbench::tensor_view dQ, ptxbench::tensor_view dK,
         ptxbench::tensor_view dV, cudaStream_t stream) {
  for (const auto* t : {&Q, &K, &V, &O, &dO, &dQ, &dK, &dV})
    if (t->ndim() != 4 || !t->is_contiguous()) throw ptxbench::shape_error("Q, K, V, O, dO, dQ, dK, dV must be contiguous [B, H, S, D]");
  if (L.ndim() != 3 || !L.is_contiguous()) throw ptxbench::shape_error("L must be contiguous [B, H, S]");
  const int64_t B = Q.size(0), H = Q.size(1), S = Q.size(2), D = Q.size(3);
  for (const auto* t : {&K, &V, &O, &dO, &dQ, &dK, &dV})
    if (t->size(0) != B || t->size(1) != H || t->size(2) != S || t->size(3) != D)
      throw ptxbench::shape_error("all [B, H, S, D] tensors must have the same shape");
  if (L.size(0) != B || L.size(1) != H || L.size(2) != S) throw ptxbench::shape_error("L must be [B, H, S]");
  if (D != kD) throw ptxbench::shape_error("this kernel supports head dimension 128 only");
  if (B <= 0 || H <= 0 || S <= 0 || S % kBN != 0) throw ptxbench::shape_error("this kernel needs S to be a positive multiple of 128");
  if (B * H > 65535) throw ptxbench::shape_error("B*H too large for the grid");
  if (B * H * S >= (int64_t(1) << 31)) throw ptxbench::shape_error("B*H*S too large for 32-bit TMA coordinates");

  const int64_t rows = B * H * S;
  // Scratch, allocated once and grown on demand: dQ accumulator (rows x 128 fp32), Dsum, L2 (rows fp32 each).
  struct scratch {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  static scratch ws;
  static const bool smem_set = [] {
    check_cuda(cudaFuncSetAttribute(mha_bwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes),
               "cudaFuncSetAttribute(max dynamic shared memory)");
    return true;
  }();
  (void)smem_set;
  const size_t need = size_t(rows) * (kD + 2) * sizeof(float);
  if (ws.bytes < need) {
    if (ws.ptr != nullptr) check_cuda(cudaFree(ws.ptr), "cudaFree(scratch)");
    ws.ptr = nullptr;
    ws.bytes = 0;
    check_cuda(cudaMalloc(&ws.ptr, need), "cudaMalloc(scratch)");
    ws.bytes = need;
  }
  float* dq_acc = static_cast<float*>(ws.ptr);
  float* dsum = dq_acc + rows * kD;
  float* lse2 = dsum + rows;

  using ptxkit::swizzle;
  const uint64_t urows = static_cast<uint64_t>(rows);
  const CUtensorMap tq = ptxkit::make_tma_2d_bf16(Q.data_ptr(), urows, kD, kD, kBM, 64, swizzle::b128);
  const CUtensorMap tdo = ptxkit::make_tma_2d_bf16(dO.data_ptr(), urows, kD, kD, kBM, 64, swizzle::b128);
  const CUtensorMap tk = ptxkit::make_tma_2d_bf16(K.data_ptr(), urows, kD, kD, kBN, 64, swizzle::b128);
  const CUtensorMap tv = ptxkit::make_tma_2d_bf16(V.data_ptr(), urows, kD, kD, kBN, 64, swizzle::b128);
  const CUtensorMap tdq = ptxkit::make_tma_2d_f32(dq_acc, urows, kD, kD, kDqBoxRows, kD, swizzle::none);

  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  bwd_preprocess_kernel<<<static_cast<unsigned>((rows + 7) / 8), 256, 0, stream>>>(
      O.data<__nv_bfloat16>(), dO.data<__nv_bfloat16>(), L.data<float>(), dsum, lse2, dq_acc, rows);
  check_cuda(cudaGetLastError(), "launching bwd_preprocess_kernel");
  mha_bwd_kernel<<<dim3(static_cast<unsigned>(S / kBN), static_cast<unsigned>(B * H)), kThreads, kSmemBytes, stream>>>(
      tq, tk, tv, tdo, tdq, lse2, dsum, dK.data<__nv_bfloat16>(), dV.data<__nv_bfloat16>(), static_cast<int>(S),
      scale * kLog2e, scale);
  check_cuda(cudaGetLastError(), "launching mha_bwd_kernel");
  bwd_convert_dq_kernel<<<static_cast<unsigned>(rows / kBM * 2), 128, 0, stream>>>(dq_acc, dQ.data<__nv_bfloat16>(),
                                                                                 static_cast<int>(S), scale);
  check_cuda(cudaGetLastError(), "launching bwd_convert_dq_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16,
                PTXBENCH_FLOAT32, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
