// ptxkit/wgmma.cuh: Hopper warpgroup MMA (wgmma.mma_async), bf16 inputs, fp32 accumulators.
//
// One wgmma computes D[64xN] (+)= A[64x16] * B[16xN] for one warpgroup (4 consecutive warps,
// 128 threads, warpgroup-aligned: threads 128*w .. 128*w+127). A comes from shared memory
// (descriptor, "_ss") or registers ("_rs"); B always from shared memory. Each thread holds N/2
// fp32 accumulators; acc_row/acc_col say which element register i is.
//
// Issue protocol (every consumer warpgroup, in this order):
//   wgmma_fence();                      // accumulators/A registers written before are ordered
//   wgmma_m64nNk16_ss(...) x K/16;      // async: nothing is read or written yet
//   wgmma_commit();                     // close the group
//   wgmma_wait<0>();                    // (or <1> to keep one group in flight)
// Only after the wait may the accumulators be read or the smem operands be overwritten / the
// slot released to the producer.
#pragma once
#include <cstdint>
#include "common.cuh"

namespace ptxkit {

/// Any thread. Shared-memory matrix descriptor: start address>>4 in bits 0-13, leading byte
/// offset>>4 in 16-29, stride byte offset>>4 in 32-45, base offset 0 (tile 1024-aligned), swizzle
/// mode in 62-63 (1 = 128B, 2 = 64B, 3 = 32B, 0 = none). The tile must stay in the same layout
/// that TMA (or your stores) produced with the same swizzle mode.
__device__ __forceinline__ uint64_t make_wgmma_desc(const void* tile, swizzle sw, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  const uint64_t mode = sw == swizzle::b128 ? 1 : sw == swizzle::b64 ? 2 : sw == swizzle::b32 ? 3 : 0;
  return static_cast<uint64_t>((smem_u32(tile) & 0x3FFFF) >> 4) |
         static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32 | mode << 62;
}

/// Any thread. K-major operand (each row holds consecutive K: A[m][k], B[n][k]) loaded by TMA with
/// swizzle Sw and a box whose inner extent is Sw bytes. 8-row groups are 8*Sw bytes apart (SBO);
/// LBO is unused for swizzled K-major layouts. For K step kk (16 elements = 32 bytes) inside the
/// row, pass desc_advance(desc, kk * 32).
template <swizzle Sw>
__device__ __forceinline__ uint64_t make_desc_k_major(const void* tile) {
  static_assert(Sw != swizzle::none, "unswizzled tiles need explicit LBO/SBO: use make_wgmma_desc");
  return make_wgmma_desc(tile, Sw, 16, 8 * static_cast<uint32_t>(Sw));
}

/// Any thread. MN-major operand (consecutive M or N contiguous, e.g. V[kv][d] as the B of P*V,
/// which then needs TransB = 1) loaded by TMA as column blocks of Sw bytes each, `block_bytes` apart
/// (LBO). 8 K-rows span 8*Sw bytes (SBO). For K step kk (16 rows) pass desc_advance(desc, kk*16*Sw).
template <swizzle Sw>
__device__ __forceinline__ uint64_t make_desc_mn_major(const void* tile, uint32_t block_bytes) {
  static_assert(Sw != swizzle::none, "unswizzled tiles need explicit LBO/SBO: use make_wgmma_desc");
  return make_wgmma_desc(tile, Sw, block_bytes, 8 * static_cast<uint32_t>(Sw));
}

/// Any thread. Moves a descriptor's start address by `bytes` (a multiple of 16).
__device__ __forceinline__ uint64_t desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

/// Warpgroup (all 128 threads). Orders earlier register writes (accumulators, A fragments)
/// before the next wgmma reads them. Required before the first wgmma and whenever registers
/// that a wgmma uses were touched since the last one.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

/// Warpgroup. Closes the current group of issued wgmma instructions.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

/// Warpgroup. Waits until at most N committed groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

/// Each thread, on accumulator arrays used across a wgmma_wait: stops the compiler from moving
/// register reads/writes of `d` across the asynchronous wgmma (pin before issue and after wait).
template <int R>
__device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}

/// Any thread of the warpgroup. Row (0..63) of accumulator register i in an m64nN tile:
/// warp w owns rows 16w..16w+15; registers alternate pairs between row g and g+8 (g = lane/4).
__device__ __forceinline__ uint32_t acc_row(uint32_t i) {
  const uint32_t t = threadIdx.x % 128;
  return (t / 32) * 16 + (t % 32) / 4 + 8 * ((i >> 1) & 1);
}

/// Any thread of the warpgroup. Column (0..N-1) of accumulator register i: registers 4j..4j+3
/// cover columns 8j..8j+7; each thread holds columns 2*(lane%4) and 2*(lane%4)+1 of them.
__device__ __forceinline__ uint32_t acc_col(uint32_t i) {
  return (i >> 2) * 8 + (threadIdx.x % 4) * 2 + (i & 1);
}

/// Any thread of the warpgroup. Converts the fp32 accumulator columns 16kk..16kk+15 (e.g. the
/// softmax probabilities P) into the bf16 A fragment of a register-A wgmma (_rs). The layouts
/// line up, so no data moves between threads.
__device__ __forceinline__ void acc_to_a_frag(const float* acc, int kk, uint32_t (&a)[4]) {
  const float* p = acc + 8 * kk;
  a[0] = pack_bf16x2(p[0], p[1]);
  a[1] = pack_bf16x2(p[2], p[3]);
  a[2] = pack_bf16x2(p[4], p[5]);
  a[3] = pack_bf16x2(p[6], p[7]);
}

/// Warpgroup. Writes an m64nN fp32 accumulator tile as bf16 to a row-major matrix at `out`
/// (tile origin) with leading dimension `ld`; rows >= rows_left or columns >= cols_left are skipped.
template <int R>
__device__ __forceinline__ void store_acc_bf16(const float (&d)[R], __nv_bfloat16* out, int64_t ld, int rows_left,
                                               int cols_left) {
#pragma unroll
  for (int i = 0; i < R; i += 2) {
    const int r = acc_row(i), c = acc_col(i);
    if (r < rows_left && c + 1 < cols_left) {
      *reinterpret_cast<uint32_t*>(out + r * ld + c) = pack_bf16x2(d[i], d[i + 1]);
    } else if (r < rows_left && c < cols_left) {
      out[r * ld + c] = __float2bfloat16_rn(d[i]);
    }
  }
}

// "+f" operand lists for N/2 accumulators (8 per PTXKIT_F8).
#define PTXKIT_F8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define PTXKIT_F32(d, i) PTXKIT_F8(d, i), PTXKIT_F8(d, i + 8), PTXKIT_F8(d, i + 16), PTXKIT_F8(d, i + 24)
#define PTXKIT_ACC16(d) PTXKIT_F8(d, 0)
#define PTXKIT_ACC32(d) PTXKIT_F8(d, 0), PTXKIT_F8(d, 8)
#define PTXKIT_ACC64(d) PTXKIT_F32(d, 0)
#define PTXKIT_ACC96(d) PTXKIT_F32(d, 0), PTXKIT_F8(d, 32), PTXKIT_F8(d, 40)
#define PTXKIT_ACC128(d) PTXKIT_F32(d, 0), PTXKIT_F32(d, 32)
#define PTXKIT_ACC192(d) PTXKIT_F32(d, 0), PTXKIT_F32(d, 32), PTXKIT_F32(d, 64)
#define PTXKIT_ACC256(d) PTXKIT_F32(d, 0), PTXKIT_F32(d, 32), PTXKIT_F32(d, 64), PTXKIT_F32(d, 96)

// Defines, for one N, the warpgroup-wide
//   wgmma_m64n<N>k16_ss<TransA, TransB>(float (&d)[N/2], desc_a, desc_b, accumulate)   A, B in smem
//   wgmma_m64n<N>k16_rs<TransB>(float (&d)[N/2], const uint32_t (&a)[4], desc_b, accumulate)  A in registers
// D[64xN] = A[64x16] * B[16xN] (+ D if accumulate != 0). TransA/TransB = 1 marks an MN-major operand.
// A (registers) uses the acc_to_a_frag layout. LIST is the accumulator brace list; R.. are the operand
// numbers that follow the N/2 accumulators (the preprocessor cannot add).
#define PTXKIT_DEFINE_WGMMA(N, LIST, R, R1, R2, R3, R4, R5, R6)                                              \
  template <int TransA = 0, int TransB = 0>                                                                    \
  __device__ __forceinline__ void wgmma_m64n##N##k16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,  \
                                                        int accumulate) {                                      \
    static_assert((TransA == 0 || TransA == 1) && (TransB == 0 || TransB == 1), "transpose flags are 0 or 1"); \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %" #R2 ", 0;\n wgmma.mma_async.sync.aligned.m64n" #N      \
                 "k16.f32.bf16.bf16 " LIST ", %" #R ", %" #R1 ", p, 1, 1, %" #R3 ", %" #R4 ";\n}"               \
                 : PTXKIT_ACC##N(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransA), "n"(TransB));      \
  }                                                                                                            \
  template <int TransB = 0>                                                                                    \
  __device__ __forceinline__ void wgmma_m64n##N##k16_rs(float (&d)[N / 2], const uint32_t (&a)[4],             \
                                                        uint64_t desc_b, int accumulate) {                     \
    static_assert(TransB == 0 || TransB == 1, "transpose flag is 0 or 1");                                     \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %" #R5 ", 0;\n wgmma.mma_async.sync.aligned.m64n" #N      \
                 "k16.f32.bf16.bf16 " LIST ", {%" #R ", %" #R1 ", %" #R2 ", %" #R3 "}, %" #R4 ", p, 1, 1, %" #R6 ";\n}" \
                 : PTXKIT_ACC##N(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),  \
                   "n"(TransB));                                                                               \
  }

PTXKIT_DEFINE_WGMMA(16, PTXKIT_LIST8, 8, 9, 10, 11, 12, 13, 14)
PTXKIT_DEFINE_WGMMA(32, PTXKIT_LIST16, 16, 17, 18, 19, 20, 21, 22)
PTXKIT_DEFINE_WGMMA(64, PTXKIT_LIST32, 32, 33, 34, 35, 36, 37, 38)
PTXKIT_DEFINE_WGMMA(96, PTXKIT_LIST48, 48, 49, 50, 51, 52, 53, 54)
PTXKIT_DEFINE_WGMMA(128, PTXKIT_LIST64, 64, 65, 66, 67, 68, 69, 70)
PTXKIT_DEFINE_WGMMA(192, PTXKIT_LIST96, 96, 97, 98, 99, 100, 101, 102)
PTXKIT_DEFINE_WGMMA(256, PTXKIT_LIST128, 128, 129, 130, 131, 132, 133, 134)

/// Warpgroup. Dispatches to the m64nNk16 shape above (N in 16, 32, 64, 96, 128, 192, 256).
template <int N, int TransA = 0, int TransB = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  if constexpr (N == 16) wgmma_m64n16k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 32) wgmma_m64n32k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 64) wgmma_m64n64k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 96) wgmma_m64n96k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 128) wgmma_m64n128k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 192) wgmma_m64n192k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else if constexpr (N == 256) wgmma_m64n256k16_ss<TransA, TransB>(d, desc_a, desc_b, accumulate);
  else static_assert(N < 0, "no wgmma wrapper for this N");
}

/// Warpgroup. Register-A dispatcher, same shapes.
template <int N, int TransB = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
  if constexpr (N == 16) wgmma_m64n16k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 32) wgmma_m64n32k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 64) wgmma_m64n64k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 96) wgmma_m64n96k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 128) wgmma_m64n128k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 192) wgmma_m64n192k16_rs<TransB>(d, a, desc_b, accumulate);
  else if constexpr (N == 256) wgmma_m64n256k16_rs<TransB>(d, a, desc_b, accumulate);
  else static_assert(N < 0, "no wgmma wrapper for this N");
}

}  // namespace ptxkit
