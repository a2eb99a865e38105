// PTXBench example: wgmma_fwd.cu (task mha_with_lse_d128: Q, K, V [B, H, S, 128] bf16 -> O bf16 and
// LSE [B, H, S] fp32, scale 1/sqrt(128), no mask).
//
// Demonstrates: a FlashAttention-style forward on Hopper's warpgroup MMA, kept simple (no TMA, no warp
// specialisation). Each block is one warpgroup owning 64 query rows of one head. Q, K and V tiles are
// copied to shared memory with ordinary loads into the 128-byte-swizzle layout (V transposed, so both
// operands of both products are K-major), then fence.proxy.async; S = QK^T is 8 x wgmma m64n64k16 with
// both operands from shared memory; the online softmax runs on the fp32 accumulators in registers; P is
// packed to bf16 in registers and used directly as the register A operand of O += PV (4 x wgmma
// m64n128k16). LSE = max + log(sum).
//
// Expected PTXBench verdict: PASSED, target instructions executed (GMMA executed; no TMA).
#include <ptxbench/abi.h>

#include <cuda_bf16.h>
#include <cmath>
#include <cstdint>
#include <string>

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHeadDim = 128;
constexpr int kBlockQ = 64;    // one warpgroup: wgmma m64
constexpr int kBlockKV = 64;   // keys per tile (== kBlockQ, which the causal tiling relies on)
constexpr int kThreads = 128;
// Shared memory, every tile 1024-byte aligned, all in the 128-byte-swizzle K-major layout:
//  Q  [64 rows][128 d] as two [64][64] halves (d 0-63, d 64-127)      16 KiB
//  K  [64 keys][128 d] as two [64][64] halves                           16 KiB
//  Vt [128 d][64 keys] (V transposed, so PV's B operand is K-major too)  16 KiB
constexpr uint32_t kHalfBytes = 64 * 64 * 2;  // 8 KiB
constexpr uint32_t kOffQ = 0, kOffK = 2 * kHalfBytes, kOffVt = 4 * kHalfBytes;
constexpr size_t kSmemBytes = 6 * kHalfBytes + 1024;  // + alignment slack
static_assert(kHalfBytes == 8192, "qk_k_step_offset assumes 8 KiB halves");
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// ---- layout helpers (begin) ----
// Pure index math, checked on the CPU by bench/eval/kernel_selftest/layout_check.cc.
// Byte offset of element (r, c), c in [0, 64), of a [rows][64] bf16 tile in the 128-byte-swizzle
// layout: 16-byte chunk index XOR (row % 8). The tile must start at a 1024-byte-aligned address.
__host__ __device__ constexpr uint32_t sw128_offset(int r, int c) {
  return uint32_t(r) * 128u + (uint32_t(((c >> 3) ^ r) & 7) << 4) + uint32_t(c & 7) * 2u;
}
// wgmma shared-memory descriptor for a K-major operand in that layout: start address, LBO = 16 B
// (unused for this layout), SBO = 1024 B (one 8-row x 128 B swizzle atom), swizzle mode 1 (128 B).
__host__ __device__ constexpr uint64_t make_sw128_desc(uint32_t smem_byte_addr) {
  return uint64_t((smem_byte_addr & 0x3FFFFu) >> 4) | (uint64_t(16u >> 4) << 16) | (uint64_t(1024u >> 4) << 32) |
         (uint64_t(1) << 62);
}
// Row and column of fp32 accumulator element i of thread `t` (0..127) of a warpgroup, wgmma m64nN.
__host__ __device__ constexpr int wg_acc_row(int t, int i) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i / 2) % 2); }
__host__ __device__ constexpr int wg_acc_col(int t, int i) { return (i / 4) * 8 + 2 * (t % 4) + (i % 2); }
// Accumulator elements of columns 16c..16c+15 become A-operand register r (a bf16 pair) of k16 chunk c.
__host__ __device__ constexpr int acc_for_a(int c, int r) { return 8 * c + 2 * r; }
// Byte offset (inside Q or K) of the start of k16 step kk (0..7) of the 128-wide head dimension, which
// is stored as two [64][64] halves of 8192 bytes: 4 steps of 32 bytes inside each 128-byte row.
__host__ __device__ constexpr uint32_t qk_k_step_offset(int kk) { return uint32_t(kk / 4) * 8192u + uint32_t(kk % 4) * 32u; }
// Byte offset (inside Q or K) where element (row, d) is stored: half d / 64, swizzled column d % 64.
__host__ __device__ constexpr uint32_t qk_smem_offset(int row, int d) { return uint32_t(d / 64) * 8192u + sw128_offset(row, d % 64); }
// Byte offset (inside Vt) where V[key][d] is stored: Vt is [128 d][64 keys], swizzled.
__host__ __device__ constexpr uint32_t vt_smem_offset(int key, int d) { return sw128_offset(d, key); }
// Descriptor start (inside Vt) of k16 chunk c of the keys: +32 bytes per chunk inside the 128-byte rows.
__host__ __device__ constexpr uint32_t vt_k_step_offset(int c) { return uint32_t(c) * 32u; }
// ---- layout helpers (end) ----

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
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo
  return *reinterpret_cast<const uint32_t*>(&v);
}

// D[64x64] (+)= A[64x16] * B[16x64]; A and B from shared memory (K-major, descriptors).
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// D[64x128] += A[64x16] * B[16x128]; A from registers (4 x bf16x2 per thread), B from shared memory.
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));  // scale-d = true: accumulate
}

// Copies 64 rows x 128 d from global (row stride 128) into two swizzled [64][64] halves.
__device__ __forceinline__ void load_rows_swizzled(unsigned char* dst, const bf16* src, int tid) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int idx = tid + i * kThreads;  // 64 rows x 16 chunks of 8 elements
    const int r = idx / 16, chunk = idx % 16;
    const uint4 v = *reinterpret_cast<const uint4*>(src + size_t(r) * kHeadDim + chunk * 8);
    *reinterpret_cast<uint4*>(dst + qk_smem_offset(r, chunk * 8)) = v;
  }
}

// Copies V[64 keys][128 d] into Vt[128 d][64 keys] (swizzled): element-wise transposing stores.
__device__ __forceinline__ void load_v_transposed(unsigned char* dst, const bf16* src, int tid) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int idx = tid + i * kThreads;
    const int key = idx / 16, d0 = (idx % 16) * 8;
    const uint4 v = *reinterpret_cast<const uint4*>(src + size_t(key) * kHeadDim + d0);
    const bf16* e = reinterpret_cast<const bf16*>(&v);
#pragma unroll
    for (int j = 0; j < 8; ++j) *reinterpret_cast<bf16*>(dst + vt_smem_offset(key, d0 + j)) = e[j];
  }
}

// One block = one warpgroup = 64 query rows of one (batch, head). Online softmax in the exp2 domain.
template <bool kCausal>
__global__ void __launch_bounds__(kThreads) attn_fwd_wgmma_kernel(const bf16* __restrict__ Q, const bf16* __restrict__ K,
                                                                  const bf16* __restrict__ V, bf16* __restrict__ O,
                                                                  float* __restrict__ LSE, int S, float scale_log2) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);

  const int t = threadIdx.x;  // 0..127, the warpgroup
  const int q_tile = kCausal ? int(gridDim.x) - 1 - int(blockIdx.x) : int(blockIdx.x);  // longest rows first
  const int q0 = q_tile * kBlockQ;
  const size_t head = size_t(blockIdx.y) * S * kHeadDim;

  load_rows_swizzled(smem + kOffQ, Q + head + size_t(q0) * kHeadDim, t);  // made visible by the loop's fence

  float o[64];  // O accumulator, m64n128
#pragma unroll
  for (int i = 0; i < 64; ++i) o[i] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY};  // rows wg_acc_row(t, 0) and wg_acc_row(t, 2)
  float l_run[2] = {0.f, 0.f};

  const int kv_tiles = kCausal ? q_tile + 1 : S / kBlockKV;
  for (int kv = 0; kv < kv_tiles; ++kv) {
    const int k0 = kv * kBlockKV;
    __syncthreads();  // all wgmmas reading the previous K / Vt have completed (each thread waited)
    load_rows_swizzled(smem + kOffK, K + head + size_t(k0) * kHeadDim, t);
    load_v_transposed(smem + kOffVt, V + head + size_t(k0) * kHeadDim, t);
    fence_proxy_async_shared();  // generic-proxy smem writes -> visible to wgmma
    __syncthreads();

    // S[64 x 64] = Q K^T: 8 k16 steps over the head dimension.
    float s[32];
    fence_operands(s);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      const uint64_t dq = make_sw128_desc(base + kOffQ + qk_k_step_offset(kk));
      const uint64_t dk = make_sw128_desc(base + kOffK + qk_k_step_offset(kk));
      wgmma_m64n64k16_ss(s, dq, dk, kk > 0 ? 1 : 0);  // the first step overwrites s
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_operands(s);

    if (kCausal && kv == q_tile) {  // diagonal tile: mask keys after the query
#pragma unroll
      for (int i = 0; i < 32; ++i)
        if (k0 + wg_acc_col(t, i) > q0 + wg_acc_row(t, i)) s[i] = -INFINITY;
    }

    // Online softmax; a row's 64 values live in the 4 threads of a quad, 16 each.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * h], s[4 * j + 2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m_run[h], mx * scale_log2);  // finite: every row has an unmasked key by now
      const float alpha = exp2f(m_run[h] - m_new);           // 0 on the first tile
      m_run[h] = m_new;
      l_run[h] *= alpha;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        o[4 * j + 2 * h] *= alpha;
        o[4 * j + 2 * h + 1] *= alpha;
      }
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(s[4 * j + 2 * h + e] * scale_log2 - m_new);
          s[4 * j + 2 * h + e] = p;
          l_run[h] += p;
        }
    }

    // P (bf16) as the register A operand of O += P V; 4 k16 chunks over the 64 keys.
    uint32_t p_frag[4][4];
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int r = 0; r < 4; ++r) p_frag[c][r] = pack_bf16(s[acc_for_a(c, r)], s[acc_for_a(c, r) + 1]);

    fence_operands(o);
    wgmma_fence();  // orders our register writes to o and p_frag before the wgmmas read them
#pragma unroll
    for (int c = 0; c < 4; ++c) wgmma_m64n128k16_rs(o, p_frag[c], make_sw128_desc(base + kOffVt + vt_k_step_offset(c)));
    wgmma_commit();
    wgmma_wait<0>();
    fence_operands(o);
  }

  bf16* o_head = O + head;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    const float inv = 1.f / l;
    const int row = q0 + wg_acc_row(t, 2 * h);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int col = wg_acc_col(t, 4 * j);
      *reinterpret_cast<__nv_bfloat162*>(o_head + size_t(row) * kHeadDim + col) =
          __floats2bfloat162_rn(o[4 * j + 2 * h] * inv, o[4 * j + 2 * h + 1] * inv);
    }
    if (t % 4 == 0) LSE[size_t(blockIdx.y) * S + row] = m_run[h] * kLn2 + logf(l);
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

  auto kernel = attn_fwd_wgmma_kernel<false>;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes)),
             "cudaFuncSetAttribute");
  const float scale_log2 = float(1.0 / std::sqrt(double(D))) * kLog2e;
  const dim3 grid(unsigned(S / kBlockQ), unsigned(B * H));
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(Q.data<bf16>(), K.data<bf16>(), V.data<bf16>(), O.data<bf16>(),
                                                 LSE.data<float>(), int(S), scale_log2);
  check_cuda(cudaGetLastError(), "launching attn_fwd_wgmma_kernel");
}

PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT32)
