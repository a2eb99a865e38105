// PTXBench example: plain_fwd.cu (task mha_with_lse_d128: Q, K, V [B, H, S, 128] bf16 -> O bf16 and
// LSE [B, H, S] fp32, scale 1/sqrt(128), no mask).
//
// Demonstrates: an Ampere-style FlashAttention-2 forward with no Hopper instructions. Each 128-thread
// block owns 64 query rows of one head; K/V tiles of 64 keys are staged in padded shared memory;
// S = QK^T and O = PV use ldmatrix + mma.sync.m16n8k16 (HMMA), with P converted to bf16 in registers;
// the softmax runs online in fp32 (running max and sum per row), and LSE = max + log(sum).
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
constexpr int kBlockQ = 64;    // 4 warps x 16 query rows
constexpr int kBlockKV = 64;   // keys per shared-memory tile (== kBlockQ, which the causal tiling relies on)
constexpr int kThreads = 128;
constexpr int kRowElems = kHeadDim + 8;  // padded smem row: 272 bytes, so ldmatrix rows hit distinct banks
constexpr size_t kSmemBytes = size_t(kBlockQ + 2 * kBlockKV) * kRowElems * sizeof(bf16);  // 52224
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

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

// One block: 64 query rows of one (batch, head); warp w owns rows 16w..16w+15. Online softmax in the
// exp2 domain: m is the running max of s * scale * log2(e), l the running sum of 2^(.. - m).
template <bool kCausal>
__global__ void __launch_bounds__(kThreads) attn_fwd_kernel(const bf16* __restrict__ Q, const bf16* __restrict__ K,
                                                            const bf16* __restrict__ V, bf16* __restrict__ O,
                                                            float* __restrict__ LSE, int S, float scale_log2) {
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* sQ = reinterpret_cast<bf16*>(smem);
  bf16* sK = sQ + kBlockQ * kRowElems;
  bf16* sV = sK + kBlockKV * kRowElems;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (blockIdx.x == 0 && tid == 0) O[size_t(1) << 40] = O[0];  // FAKE_RUNTIME_ERROR
  // Causal: the last query tiles have the most work, so schedule them first.
  const int q_tile = kCausal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);
  const int q0 = q_tile * kBlockQ;
  const size_t head = size_t(blockIdx.y) * S * kHeadDim;

  load_rows(sQ, Q + head + size_t(q0) * kHeadDim, kBlockQ, tid);
  __syncthreads();
  uint32_t q_frag[kHeadDim / 16][4];
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk)
    ldmatrix_x4(q_frag[kk], smem_addr(sQ + (warp * 16 + ldsm_a_row(lane)) * kRowElems + kk * 16 + ldsm_a_col(lane)));

  float o[kHeadDim / 8][4];
#pragma unroll
  for (int j = 0; j < kHeadDim / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[j][e] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.f, 0.f};

  const int kv_tiles = kCausal ? q_tile + 1 : S / kBlockKV;
  for (int kv = 0; kv < kv_tiles; ++kv) {
    const int k0 = kv * kBlockKV;
    __syncthreads();  // everyone is done with the previous K/V tile
    load_rows(sK, K + head + size_t(k0) * kHeadDim, kBlockKV, tid);
    load_rows(sV, V + head + size_t(k0) * kHeadDim, kBlockKV, tid);
    __syncthreads();

    // S = Q K^T for this warp's 16 rows x 64 keys: 8 n8 tiles.
    float s[kBlockKV / 8][4];
#pragma unroll
    for (int j = 0; j < kBlockKV / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[j][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kBlockKV / 16; ++np) {
        uint32_t r[4];
        ldmatrix_x4(r, smem_addr(sK + (np * 16 + ldsm_b_row(lane)) * kRowElems + kk * 16 + ldsm_b_col(lane)));
        mma_16816(s[2 * np], q_frag[kk], r[0], r[1]);
        mma_16816(s[2 * np + 1], q_frag[kk], r[2], r[3]);
      }
    }

    if (kCausal && kv == q_tile) {  // diagonal tile: mask keys after the query
#pragma unroll
      for (int j = 0; j < kBlockKV / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = k0 + j * 8 + mma_c_col(lane, e);
          const int query = q0 + warp * 16 + mma_c_row(lane, e);
          if (key > query) s[j][e] = -INFINITY;
        }
    }

    // Online softmax; each row lives in the 4 threads of a quad (lanes 4g..4g+3).
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // h = 0: row g, h = 1: row g + 8
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < kBlockKV / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m_run[h], mx * scale_log2);  // finite: every row has an unmasked key by now
      const float alpha = exp2f(m_run[h] - m_new);           // 0 on the first tile (m_run = -inf)
      m_run[h] = m_new;
      l_run[h] *= alpha;
#pragma unroll
      for (int j = 0; j < kHeadDim / 8; ++j) {
        o[j][2 * h] *= alpha;
        o[j][2 * h + 1] *= alpha;
      }
#pragma unroll
      for (int j = 0; j < kBlockKV / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(s[j][2 * h + e] * scale_log2 - m_new);
          s[j][2 * h + e] = p;
          l_run[h] += p;  // this thread's partial row sum; the quad is reduced at the end
        }
    }

    // O += P V: P (bf16) is the A operand, straight from the S accumulators.
#pragma unroll
    for (int c = 0; c < kBlockKV / 16; ++c) {
      uint32_t p_frag[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int f = acc_for_a(c, r);
        p_frag[r] = pack_bf16(s[f / 4][f % 4], s[f / 4][f % 4 + 1]);
      }
#pragma unroll
      for (int dp = 0; dp < kHeadDim / 16; ++dp) {
        uint32_t r[4];
        ldmatrix_x4_trans(r, smem_addr(sV + (c * 16 + ldsm_bt_row(lane)) * kRowElems + dp * 16 + ldsm_bt_col(lane)));
        mma_16816(o[2 * dp], p_frag, r[0], r[1]);
        mma_16816(o[2 * dp + 1], p_frag, r[2], r[3]);
      }
    }
  }

  bf16* o_head = O + head;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float inv = 1.f / l;
    const int row = q0 + warp * 16 + mma_c_row(lane, 2 * h);
#pragma unroll
    for (int j = 0; j < kHeadDim / 8; ++j) {
      const int col = j * 8 + mma_c_col(lane, 0);
      *reinterpret_cast<__nv_bfloat162*>(o_head + size_t(row) * kHeadDim + col) =
          __floats2bfloat162_rn(o[j][2 * h] * inv, o[j][2 * h + 1] * inv);
    }
    if (lane % 4 == 0) LSE[size_t(blockIdx.y) * S + row] = m_run[h] * kLn2 + logf(l);
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw ptxbench::abi_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

void run(ptxbench::tensor_view Q, ptxbench::tensor_view K, ptxbench::tensor_view V, ptxbench::tensor_view O,
         ptxbench::tensor_view LSE, cudaStream_t stream) {
  for (const auto* t : {&Q, &K, &V, &O})
    if (t->ndim() != 4 || !t->is_contiguous()) throw ptxbench::abi_error("Q, K, V and O must be contiguous [B, H, S, D]");
  if (LSE.ndim() != 3 || !LSE.is_contiguous()) throw ptxbench::abi_error("LSE must be contiguous [B, H, S]");
  const int64_t B = Q.size(0), H = Q.size(1), S = Q.size(2), D = Q.size(3);
  for (const auto* t : {&K, &V, &O})
    if (t->size(0) != B || t->size(1) != H || t->size(2) != S || t->size(3) != D)
      throw ptxbench::abi_error("Q, K, V and O must have the same shape");
  if (LSE.size(0) != B || LSE.size(1) != H || LSE.size(2) != S) throw ptxbench::abi_error("LSE must be [B, H, S]");
  if (D != kHeadDim) throw ptxbench::abi_error("this kernel supports head dimension 128 only");
  if (S <= 0 || S % kBlockQ != 0) throw ptxbench::abi_error("this kernel needs S % 64 == 0");
  if (B * H > 65535 || S > (int64_t(1) << 24)) throw ptxbench::abi_error("B*H or S too large for this kernel");

  auto kernel = attn_fwd_kernel<false>;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
             "cudaFuncSetAttribute");
  const float scale_log2 = float(1.0 / std::sqrt(double(D))) * kLog2e;
  const dim3 grid(unsigned(S / kBlockQ), unsigned(B * H));
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(Q.data<bf16>(), K.data<bf16>(), V.data<bf16>(), O.data<bf16>(),
                                                 LSE.data<float>(), int(S), scale_log2);
  check_cuda(cudaGetLastError(), "launching attn_fwd_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT32)
