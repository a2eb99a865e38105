// PTXBench example: plain_bwd_causal.cu (task mha_bwd_d128_causal: Q, K, V, O, dO [B, H, S, 128] bf16
// and the forward's L = logsumexp [B, H, S] fp32 -> dQ, dK, dV bf16; scale 1/sqrt(128), causal:
// query i attends to keys j <= i).
//
// Demonstrates: the causal variant of plain_bwd.cu, an Ampere-style FlashAttention-2 backward with no
// Hopper instructions: Delta = rowsum(dO * O) into stream-ordered scratch; a dK/dV kernel per 64 keys
// that visits only queries >= its first key; a dQ kernel per 64 queries that visits only keys <= its
// last query (longest rows first); masked probabilities are exactly 0. Products use ldmatrix(.trans) +
// mma.sync.m16n8k16 (HMMA), bf16 operands, fp32 accumulation, no atomics.
//
// Expected PTXBench verdict: PASSED, target instructions absent_in_sass (no GMMA, no TMA).
#include <ptxbench/abi.h>

#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHeadDim = 128;
constexpr int kThreads = 128;            // 4 warps x 16 rows
constexpr int kRowElems = kHeadDim + 8;  // padded smem row: 272 bytes, so ldmatrix rows hit distinct banks
constexpr int kKeysPerBlock = 64;        // dK/dV kernel: keys owned by a block
constexpr int kQueriesPerStep = 32;      // dK/dV kernel: queries per inner step
constexpr int kQueriesPerBlock = 64;     // dQ kernel: queries owned by a block
constexpr int kKeysPerStep = 64;         // dQ kernel: keys per inner step
constexpr size_t kSmemDkDv =
    size_t(2 * kKeysPerBlock + 2 * kQueriesPerStep) * kRowElems * sizeof(bf16) + 2 * kQueriesPerStep * sizeof(float);
constexpr size_t kSmemDq = size_t(2 * kQueriesPerBlock + 2 * kKeysPerStep) * kRowElems * sizeof(bf16);
constexpr float kLog2e = 1.4426950408889634f;

// ---- layout helpers (begin) ----
// Pure index math, checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
// ldmatrix.x4 row/column (within a 16x16 block) whose address lane `lane` supplies:
//  - A operand stored [m][k]: matrices = mma.m16n8k16 A registers a0..a3;
__host__ __device__ constexpr int ldsm_a_row(int lane) { return lane % 16; }
__host__ __device__ constexpr int ldsm_a_col(int lane) { return (lane / 16) * 8; }
//  - B operand stored [n][k] (no .trans): r0,r1 = B registers of n8 tile 0, r2,r3 = of n8 tile 1;
__host__ __device__ constexpr int ldsm_b_row(int lane) { return (lane % 8) + (lane / 16) * 8; }
__host__ __device__ constexpr int ldsm_b_col(int lane) { return ((lane / 8) % 2) * 8; }
//  - B operand stored [k][n] (.trans): rows are k, columns n; same register assignment.
__host__ __device__ constexpr int ldsm_bt_row(int lane) { return (lane % 8) + ((lane / 8) % 2) * 8; }
__host__ __device__ constexpr int ldsm_bt_col(int lane) { return (lane / 16) * 8; }
// mma.m16n8k16 accumulator c[i]: row and column inside the 16x8 tile.
__host__ __device__ constexpr int mma_c_row(int lane, int i) { return lane / 4 + 8 * (i / 2); }
__host__ __device__ constexpr int mma_c_col(int lane, int i) { return 2 * (lane % 4) + (i % 2); }
// Accumulators of n8 tiles (2c, 2c+1) become the A operand of k16 chunk c: A register r takes the
// accumulator pair starting at flat index acc_for_a(c, r) (flat index = 4 * tile + element).
__host__ __device__ constexpr int acc_for_a(int c, int r) { return 8 * c + 2 * r; }
// ---- layout helpers (end) ----

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
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
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Copies `rows` rows of 128 bf16 from global (row stride 128) to padded shared memory.
__device__ __forceinline__ void load_rows(bf16* dst, const bf16* src, int rows, int tid) {
  for (int i = tid; i < rows * (kHeadDim / 8); i += kThreads) {
    const int r = i / (kHeadDim / 8), c = (i % (kHeadDim / 8)) * 8;
    *reinterpret_cast<uint4*>(dst + r * kRowElems + c) = *reinterpret_cast<const uint4*>(src + size_t(r) * kHeadDim + c);
  }
}

// C[16 x 8*N8] (+)= A[16 x 128] * B, one warp. A rows from padded smem [m][k] (rows a_row0..+15),
// B from padded smem stored [n][k] (n rows b_row0..b_row0 + 8*N8 - 1).
template <int N8>
__device__ __forceinline__ void warp_gemm_nk(float (&c)[N8][4], const bf16* sa, int a_row0, const bf16* sb, int b_row0,
                                             int lane) {
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    uint32_t a[4];
    ldmatrix_x4(a, smem_addr(sa + (a_row0 + ldsm_a_row(lane)) * kRowElems + kk * 16 + ldsm_a_col(lane)));
#pragma unroll
    for (int np = 0; np < N8 / 2; ++np) {
      uint32_t r[4];
      ldmatrix_x4(r, smem_addr(sb + (b_row0 + np * 16 + ldsm_b_row(lane)) * kRowElems + kk * 16 + ldsm_b_col(lane)));
      mma_16816(c[2 * np], a, r[0], r[1]);
      mma_16816(c[2 * np + 1], a, r[2], r[3]);
    }
  }
}

// C[16 x 128] += A[16 x 16*KC] * B[16*KC x 128], one warp. A from registers (bf16 pairs, see acc_for_a),
// B from padded smem stored [k][n] (k rows b_row0..b_row0 + 16*KC - 1, n = the 128 columns).
template <int KC>
__device__ __forceinline__ void warp_gemm_kn(float (&c)[kHeadDim / 8][4], const uint32_t (&a)[KC][4], const bf16* sb,
                                             int b_row0, int lane) {
#pragma unroll
  for (int kc = 0; kc < KC; ++kc) {
#pragma unroll
    for (int dp = 0; dp < kHeadDim / 16; ++dp) {
      uint32_t r[4];
      ldmatrix_x4_trans(r, smem_addr(sb + (b_row0 + kc * 16 + ldsm_bt_row(lane)) * kRowElems + dp * 16 + ldsm_bt_col(lane)));
      mma_16816(c[2 * dp], a[kc], r[0], r[1]);
      mma_16816(c[2 * dp + 1], a[kc], r[2], r[3]);
    }
  }
}

template <int KC>
__device__ __forceinline__ void acc_to_a(uint32_t (&a)[KC][4], const float (&acc)[2 * KC][4]) {
#pragma unroll
  for (int c = 0; c < KC; ++c)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int f = acc_for_a(c, r);
      a[c][r] = pack_bf16(acc[f / 4][f % 4], acc[f / 4][f % 4 + 1]);
    }
}

// dS is a difference of nearly equal terms where few keys are visible (the first rows under a causal
// mask), so rounding it to bf16 once can move dQ and dK past the 1e-2 tolerance. A second MMA on the
// bf16 rounding residual keeps the product accurate to about 16 bits: acc becomes acc - bf16(acc).
template <int N>
__device__ __forceinline__ void keep_bf16_residual(float (&acc)[N][4]) {
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[j][e] -= __bfloat162float(__float2bfloat16(acc[j][e]));
}

// Delta[row] = sum_d dO[row, d] * O[row, d], one warp per row.
__global__ void __launch_bounds__(256) bwd_delta_kernel(const bf16* __restrict__ O, const bf16* __restrict__ dO,
                                                        float* __restrict__ delta, int64_t rows) {
  const int64_t row = int64_t(blockIdx.x) * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const uint2 ov = *reinterpret_cast<const uint2*>(O + row * kHeadDim + lane * 4);
  const uint2 dv = *reinterpret_cast<const uint2*>(dO + row * kHeadDim + lane * 4);
  const bf16* o = reinterpret_cast<const bf16*>(&ov);
  const bf16* d = reinterpret_cast<const bf16*>(&dv);
  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < 4; ++e) sum += __bfloat162float(o[e]) * __bfloat162float(d[e]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) delta[row] = sum;
}

// dK, dV for 64 keys of one head; warp w owns keys 16w..16w+15. Loops over 32-query steps and works
// on transposed scores: S^T = K Q^T, P^T = exp(S^T * scale - L), dV += P^T dO, dP^T = V dO^T,
// dS^T = P^T * (dP^T - Delta), dK += dS^T Q (scaled at the end).
template <bool kCausal>
__global__ void __launch_bounds__(kThreads) bwd_dkdv_kernel(const bf16* __restrict__ Q, const bf16* __restrict__ K,
                                                            const bf16* __restrict__ V, const bf16* __restrict__ dO,
                                                            const float* __restrict__ L, const float* __restrict__ delta,
                                                            bf16* __restrict__ dK, bf16* __restrict__ dV, int S,
                                                            float scale, float scale_log2) {
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* sK = reinterpret_cast<bf16*>(smem);
  bf16* sV = sK + kKeysPerBlock * kRowElems;
  bf16* sQ = sV + kKeysPerBlock * kRowElems;
  bf16* sdO = sQ + kQueriesPerStep * kRowElems;
  float* sL = reinterpret_cast<float*>(sdO + kQueriesPerStep * kRowElems);  // L * log2(e)
  float* sDelta = sL + kQueriesPerStep;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int k0 = blockIdx.x * kKeysPerBlock;
  const size_t head = size_t(blockIdx.y) * S * kHeadDim;
  const size_t head_rows = size_t(blockIdx.y) * S;

  load_rows(sK, K + head + size_t(k0) * kHeadDim, kKeysPerBlock, tid);
  load_rows(sV, V + head + size_t(k0) * kHeadDim, kKeysPerBlock, tid);

  float dk[kHeadDim / 8][4], dv[kHeadDim / 8][4];
#pragma unroll
  for (int j = 0; j < kHeadDim / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) dk[j][e] = dv[j][e] = 0.f;

  // Causal: queries before k0 see none of these keys.
  for (int q0 = kCausal ? k0 : 0; q0 < S; q0 += kQueriesPerStep) {
    __syncthreads();  // previous step's sQ / sdO reads are done (first pass: nothing to wait for)
    load_rows(sQ, Q + head + size_t(q0) * kHeadDim, kQueriesPerStep, tid);
    load_rows(sdO, dO + head + size_t(q0) * kHeadDim, kQueriesPerStep, tid);
    if (tid < kQueriesPerStep) {
      sL[tid] = L[head_rows + q0 + tid] * kLog2e;
      sDelta[tid] = delta[head_rows + q0 + tid];
    }
    __syncthreads();

    float st[kQueriesPerStep / 8][4] = {};  // S^T: 16 keys x 32 queries
    warp_gemm_nk<kQueriesPerStep / 8>(st, sK, warp * 16, sQ, 0, lane);
#pragma unroll
    for (int j = 0; j < kQueriesPerStep / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qi = j * 8 + mma_c_col(lane, e);
        const int key = k0 + warp * 16 + mma_c_row(lane, e);
        float p = exp2f(st[j][e] * scale_log2 - sL[qi]);
        if (kCausal && key > q0 + qi) p = 0.f;
        st[j][e] = p;  // now P^T
      }

    float dpt[kQueriesPerStep / 8][4] = {};  // dP^T = V dO^T
    warp_gemm_nk<kQueriesPerStep / 8>(dpt, sV, warp * 16, sdO, 0, lane);

    uint32_t a[kQueriesPerStep / 16][4];
    acc_to_a<kQueriesPerStep / 16>(a, st);
    warp_gemm_kn<kQueriesPerStep / 16>(dv, a, sdO, 0, lane);  // dV += P^T dO

#pragma unroll
    for (int j = 0; j < kQueriesPerStep / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int qi = j * 8 + mma_c_col(lane, e);
        dpt[j][e] = st[j][e] * (dpt[j][e] - sDelta[qi]);  // now dS^T
      }
    acc_to_a<kQueriesPerStep / 16>(a, dpt);
    warp_gemm_kn<kQueriesPerStep / 16>(dk, a, sQ, 0, lane);  // dK += dS^T Q
    keep_bf16_residual<kQueriesPerStep / 8>(dpt);
    acc_to_a<kQueriesPerStep / 16>(a, dpt);
    warp_gemm_kn<kQueriesPerStep / 16>(dk, a, sQ, 0, lane);  // ... + (dS^T - bf16(dS^T)) Q
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int key = k0 + warp * 16 + mma_c_row(lane, 2 * h);
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j) {
      const size_t at = head + size_t(key) * kHeadDim + j * 8 + mma_c_col(lane, 0);
      *reinterpret_cast<__nv_bfloat162*>(dK + at) = __floats2bfloat162_rn(dk[j][2 * h] * scale, dk[j][2 * h + 1] * scale);
      *reinterpret_cast<__nv_bfloat162*>(dV + at) = __floats2bfloat162_rn(dv[j][2 * h], dv[j][2 * h + 1]);
    }
  }
}

// dQ for 64 queries of one head; warp w owns queries 16w..16w+15. Loops over 64-key steps:
// S = Q K^T, P = exp(S * scale - L), dP = dO V^T, dS = P * (dP - Delta), dQ += dS K (scaled at the end).
template <bool kCausal>
__global__ void __launch_bounds__(kThreads) bwd_dq_kernel(const bf16* __restrict__ Q, const bf16* __restrict__ K,
                                                          const bf16* __restrict__ V, const bf16* __restrict__ dO,
                                                          const float* __restrict__ L, const float* __restrict__ delta,
                                                          bf16* __restrict__ dQ, int S, float scale, float scale_log2) {
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* sQ = reinterpret_cast<bf16*>(smem);
  bf16* sdO = sQ + kQueriesPerBlock * kRowElems;
  bf16* sK = sdO + kQueriesPerBlock * kRowElems;
  bf16* sV = sK + kKeysPerStep * kRowElems;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q_tile = kCausal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);  // longest rows first
  const int q0 = q_tile * kQueriesPerBlock;
  const size_t head = size_t(blockIdx.y) * S * kHeadDim;
  const size_t head_rows = size_t(blockIdx.y) * S;

  load_rows(sQ, Q + head + size_t(q0) * kHeadDim, kQueriesPerBlock, tid);
  load_rows(sdO, dO + head + size_t(q0) * kHeadDim, kQueriesPerBlock, tid);
  float l2[2], dl[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = q0 + warp * 16 + mma_c_row(lane, 2 * h);
    l2[h] = L[head_rows + row] * kLog2e;
    dl[h] = delta[head_rows + row];
  }

  float dq[kHeadDim / 8][4];
#pragma unroll
  for (int j = 0; j < kHeadDim / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) dq[j][e] = 0.f;

  const int k_end = kCausal ? q0 + kQueriesPerBlock : S;  // keys after the block's last query are masked
  for (int k0 = 0; k0 < k_end; k0 += kKeysPerStep) {
    __syncthreads();
    load_rows(sK, K + head + size_t(k0) * kHeadDim, kKeysPerStep, tid);
    load_rows(sV, V + head + size_t(k0) * kHeadDim, kKeysPerStep, tid);
    __syncthreads();

    float s[kKeysPerStep / 8][4] = {};
    warp_gemm_nk<kKeysPerStep / 8>(s, sQ, warp * 16, sK, 0, lane);
#pragma unroll
    for (int j = 0; j < kKeysPerStep / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = k0 + j * 8 + mma_c_col(lane, e);
        const int query = q0 + warp * 16 + mma_c_row(lane, e);
        float p = exp2f(s[j][e] * scale_log2 - l2[e / 2]);
        if (kCausal && key > query) p = 0.f;
        s[j][e] = p;
      }

    float dp[kKeysPerStep / 8][4] = {};
    warp_gemm_nk<kKeysPerStep / 8>(dp, sdO, warp * 16, sV, 0, lane);
#pragma unroll
    for (int j = 0; j < kKeysPerStep / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) dp[j][e] = s[j][e] * (dp[j][e] - dl[e / 2]);  // dS

    uint32_t a[kKeysPerStep / 16][4];
    acc_to_a<kKeysPerStep / 16>(a, dp);
    warp_gemm_kn<kKeysPerStep / 16>(dq, a, sK, 0, lane);  // dQ += dS K
    keep_bf16_residual<kKeysPerStep / 8>(dp);
    acc_to_a<kKeysPerStep / 16>(a, dp);
    warp_gemm_kn<kKeysPerStep / 16>(dq, a, sK, 0, lane);  // ... + (dS - bf16(dS)) K
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = q0 + warp * 16 + mma_c_row(lane, 2 * h);
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j) {
      const size_t at = head + size_t(row) * kHeadDim + j * 8 + mma_c_col(lane, 0);
      *reinterpret_cast<__nv_bfloat162*>(dQ + at) = __floats2bfloat162_rn(dq[j][2 * h] * scale, dq[j][2 * h + 1] * scale);
    }
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void run(ptxbench::tensor_view Q, ptxbench::tensor_view K, ptxbench::tensor_view V, ptxbench::tensor_view O,
         ptxbench::tensor_view dO, ptxbench::tensor_view L, ptxbench::tensor_view dQ, ptxbench::tensor_view dK,
         ptxbench::tensor_view dV, cudaStream_t stream) {
  for (const auto* t : {&Q, &K, &V, &O, &dO, &dQ, &dK, &dV})
    if (t->ndim() != 4 || !t->is_contiguous()) throw ptxbench::abi_error("Q, K, V, O, dO, dQ, dK, dV must be contiguous [B, H, S, D]");
  if (L.ndim() != 3 || !L.is_contiguous()) throw ptxbench::abi_error("L must be contiguous [B, H, S]");
  const int64_t B = Q.size(0), H = Q.size(1), S = Q.size(2), D = Q.size(3);
  for (const auto* t : {&K, &V, &O, &dO, &dQ, &dK, &dV})
    if (t->size(0) != B || t->size(1) != H || t->size(2) != S || t->size(3) != D)
      throw ptxbench::abi_error("all [B, H, S, D] tensors must have the same shape");
  if (L.size(0) != B || L.size(1) != H || L.size(2) != S) throw ptxbench::abi_error("L must be [B, H, S]");
  if (D != kHeadDim) throw ptxbench::abi_error("this kernel supports head dimension 128 only");
  if (S <= 0 || S % 64 != 0) throw ptxbench::abi_error("this kernel needs S % 64 == 0");
  if (B * H > 65535 || S > (int64_t(1) << 24)) throw ptxbench::abi_error("B*H or S too large for this kernel");

  const int64_t rows = B * H * S;
  const float scale = float(1.0 / std::sqrt(double(D)));
  const float scale_log2 = scale * kLog2e;

  float* delta = nullptr;  // stream-ordered scratch: Delta = rowsum(dO * O)
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&delta), size_t(rows) * sizeof(float), stream), "cudaMallocAsync");
  bwd_delta_kernel<<<unsigned((rows + 7) / 8), 256, 0, stream>>>(O.data<bf16>(), dO.data<bf16>(), delta, rows);
  cudaError_t e = cudaGetLastError();

  auto dkdv = bwd_dkdv_kernel<true>;
  auto dq = bwd_dq_kernel<true>;
  if (e == cudaSuccess) e = cudaFuncSetAttribute(dkdv, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemDkDv));
  if (e == cudaSuccess) e = cudaFuncSetAttribute(dq, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemDq));
  if (e == cudaSuccess) {
    dkdv<<<dim3(unsigned(S / kKeysPerBlock), unsigned(B * H)), kThreads, kSmemDkDv, stream>>>(
        Q.data<bf16>(), K.data<bf16>(), V.data<bf16>(), dO.data<bf16>(), L.data<float>(), delta, dK.data<bf16>(),
        dV.data<bf16>(), int(S), scale, scale_log2);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) {
    dq<<<dim3(unsigned(S / kQueriesPerBlock), unsigned(B * H)), kThreads, kSmemDq, stream>>>(
        Q.data<bf16>(), K.data<bf16>(), V.data<bf16>(), dO.data<bf16>(), L.data<float>(), delta, dQ.data<bf16>(), int(S),
        scale, scale_log2);
    e = cudaGetLastError();
  }
  cudaFreeAsync(delta, stream);  // after the kernels on the same stream
  check_cuda(e, "launching the backward kernels");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16,
                PTXBENCH_FLOAT32, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)
