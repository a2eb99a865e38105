// ptxkit/tcgen05.cuh: Blackwell (sm_100a) 5th-generation tensor cores. MMAs read A and B from
// shared memory (or A from tensor memory) and accumulate into TENSOR MEMORY (TMEM), a 256 KB
// per-SM scratchpad of 128 lanes x 512 columns x 32 bit, allocated per CTA by column ranges.
//
// A TMEM address is 32 bits: lane in bits 31..16, column in bits 15..0. The allocator returns the
// base (lane 0, first column). An fp32 accumulator of an M=128 MMA occupies lanes 0..127 (row i =
// lane i) and N columns. Warp w of a warpgroup can only tcgen05.ld/st lanes 32*(w%4)..+31.
//
// Ordering: tcgen05 operations are asynchronous. MMA completion is observed through
// tcgen05.commit -> mbarrier; ld/st completion through tcgen05.wait::ld/st. Around any thread
// synchronisation (mbarrier wait, __syncthreads, named barrier) that orders tcgen05 work of
// different threads, use tcgen05_fence_before() on the signalling side and
// tcgen05_fence_after() on the waiting side.
//
// cta_group: ::1 = this CTA alone. ::2 = a CTA pair (cluster ranks 2k, 2k+1): one MMA instruction
// issued by the even ("leader") CTA computes an M=256 (or 128) tile whose A rows and accumulator
// are split across both CTAs' smem/TMEM. Every tcgen05 instruction of a kernel must use the same
// cta_group.
#pragma once
#include <cstdint>
#include "common.cuh"

namespace ptxkit {

/// Any thread. Builds a TMEM address from the allocation base, a lane and a column offset.
__device__ __forceinline__ uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t col) {
  return base + (lane << 16) + col;
}

/// One whole warp (cta_group::2: one warp in each CTA of the pair, same arguments). Allocates
/// NCols columns (power of two, 32..512) and writes the base address to *smem_slot. Blocks while
/// TMEM is taken by other CTAs on the SM. Read the slot after a fence_after + barrier.
template <int NCols, int CtaGroup = 1>
__device__ __forceinline__ void tmem_alloc(uint32_t* smem_slot) {
  static_assert(NCols >= 32 && NCols <= 512 && (NCols & (NCols - 1)) == 0, "TMEM columns: power of two in [32, 512]");
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(smem_u32(smem_slot)), "n"(NCols) : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" :: "r"(smem_u32(smem_slot)), "n"(NCols) : "memory");
}

/// The warp that allocated (same NCols), after every MMA/ld/st on the columns has completed.
/// Every allocation must be freed before the kernel exits.
template <int NCols, int CtaGroup = 1>
__device__ __forceinline__ void tmem_dealloc(uint32_t base) {
  static_assert(NCols >= 32 && NCols <= 512 && (NCols & (NCols - 1)) == 0, "TMEM columns: power of two in [32, 512]");
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(base), "n"(NCols) : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" :: "r"(base), "n"(NCols) : "memory");
}

/// The allocating warp, right after its last tmem_alloc. Lets other CTAs on the SM allocate
/// without waiting for this CTA (a CTA may not allocate again afterwards).
template <int CtaGroup = 1>
__device__ __forceinline__ void tmem_relinquish() {
  if constexpr (CtaGroup == 1) asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  else asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
}

/// Each signalling thread, before the barrier/arrive that publishes its tcgen05 work (e.g. the
/// TMEM allocation, or "accumulator consumed, MMA may overwrite it").
__device__ __forceinline__ void tcgen05_fence_before() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

/// Each waiting thread, right after the barrier/wait, before it issues tcgen05 work that depends
/// on the other thread's (e.g. tcgen05.ld after waiting on the MMA-done mbarrier).
__device__ __forceinline__ void tcgen05_fence_after() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

/// Shared-memory matrix descriptor (sm100 format): start>>4 in bits 0-13, LBO>>4 in 16-29,
/// SBO>>4 in 32-45, fixed version 1 in bits 46-47, base offset 0, layout in 61-63
/// (0 none, 2 = 128B, 4 = 64B, 6 = 32B swizzle; the same byte patterns TMA writes).
__device__ __forceinline__ uint64_t make_umma_desc(const void* tile, swizzle sw, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  const uint64_t layout = sw == swizzle::b128 ? 2 : sw == swizzle::b64 ? 4 : sw == swizzle::b32 ? 6 : 0;
  return static_cast<uint64_t>((smem_u32(tile) & 0x3FFFF) >> 4) |
         static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16 |
         static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32 | uint64_t(1) << 46 | layout << 61;
}

/// Any thread. K-major operand written by TMA with swizzle Sw (box inner extent = Sw bytes):
/// SBO = 8 rows * Sw bytes. Step k16 (32 bytes of bf16) with umma_desc_advance(desc, kk * 32).
template <swizzle Sw>
__device__ __forceinline__ uint64_t make_umma_desc_k_major(const void* tile) {
  static_assert(Sw != swizzle::none, "unswizzled tiles need explicit LBO/SBO: use make_umma_desc");
  return make_umma_desc(tile, Sw, 16, 8 * static_cast<uint32_t>(Sw));
}

/// Any thread. Moves a descriptor's start address by `bytes` (a multiple of 16).
__device__ __forceinline__ uint64_t umma_desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}

/// Compile time. Instruction descriptor for kind::f16 with fp32 accumulation: D format F32 (bits
/// 4-5 = 1), A/B format BF16 (1) or F16 (0) in bits 7-9 / 10-12, A/B major (0 = K, 1 = MN) in
/// bits 15 / 16, N>>3 in bits 17-22, M>>4 in bits 24-28. Shapes: cta_group::1 M = 64 (N % 8 == 0)
/// or 128 (N % 16 == 0), cta_group::2 M = 128 (N % 32 == 0) or 256 (N % 16 == 0); N <= 256.
template <int M, int N, int CtaGroup = 1, bool AMajorMN = false, bool BMajorMN = false, bool Bf16 = true>
__host__ __device__ constexpr uint32_t make_idesc_f16() {
  static_assert(CtaGroup == 1 ? (M == 64 || M == 128) : (M == 128 || M == 256), "unsupported M for this cta_group");
  static_assert(N >= 16 && N <= 256 && N % (M == 64 ? 8 : (CtaGroup == 2 && M == 128) ? 32 : 16) == 0,
                "unsupported N for this M and cta_group");
  const uint32_t fmt = Bf16 ? 1u : 0u;
  return (1u << 4) | (fmt << 7) | (fmt << 10) | (uint32_t(AMajorMN) << 15) | (uint32_t(BMajorMN) << 16) |
         (uint32_t(N >> 3) << 17) | (uint32_t(M >> 4) << 24);
}

/// ONE thread (cta_group::2: one thread of the leader CTA). D[tmem] (+)= A * B, A and B from smem
/// descriptors (cta_group::2: the same smem offsets in both CTAs, each holding its half).
/// accumulate = 0 overwrites D. Completion only via umma_commit -> mbarrier.
template <int CtaGroup = 1>
__device__ __forceinline__ void umma_f16_ss(uint32_t d_tmem, uint64_t desc_a, uint64_t desc_b, uint32_t idesc,
                                            int accumulate) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}"
                 :: "r"(d_tmem), "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(accumulate) : "memory");
  else
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}"
                 :: "r"(d_tmem), "l"(desc_a), "l"(desc_b), "r"(idesc), "r"(accumulate) : "memory");
}

/// ONE thread. Like umma_f16_ss with A read from TMEM (a_tmem: M lanes x K/2 columns of packed
/// bf16x2, e.g. P written back by tmem_st after softmax). A must be K-major (idesc bit 15 = 0).
template <int CtaGroup = 1>
__device__ __forceinline__ void umma_f16_ts(uint32_t d_tmem, uint32_t a_tmem, uint64_t desc_b, uint32_t idesc,
                                            int accumulate) {
  static_assert(CtaGroup == 1 || CtaGroup == 2, "cta_group is 1 or 2");
  if constexpr (CtaGroup == 1)
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}"
                 :: "r"(d_tmem), "r"(a_tmem), "l"(desc_b), "r"(idesc), "r"(accumulate) : "memory");
  else
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, p;\n}"
                 :: "r"(d_tmem), "r"(a_tmem), "l"(desc_b), "r"(idesc), "r"(accumulate) : "memory");
}

/// The thread that issued the MMAs. Makes `bar` (local shared address) receive one arrival when
/// every tcgen05 operation this thread issued so far has completed (smem operands consumed, D
/// written). Use it both for "slot free" (empty barrier) and "accumulator ready".
template <int CtaGroup = 1>
__device__ __forceinline__ void umma_commit(uint64_t* bar) {
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(smem_u32(bar)) : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(smem_u32(bar)) : "memory");
}

/// The issuing thread (leader CTA). Like umma_commit, but arrives on the barrier at `bar`'s offset
/// in every CTA of `cta_mask` (pairs: 0b11 << (2*pair)), so both CTAs learn that the pair MMA is done.
template <int CtaGroup = 2>
__device__ __forceinline__ void umma_commit_multicast(uint64_t* bar, uint16_t cta_mask) {
  if constexpr (CtaGroup == 1)
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 :: "r"(smem_u32(bar)), "h"(cta_mask) : "memory");
  else
    asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
                 :: "r"(smem_u32(bar)), "h"(cta_mask) : "memory");
}

// Register operand lists for tcgen05.ld ("=r") and tcgen05.st ("r"), 8 per macro.
#define PTXKIT_U8(r, i) "=r"(r[i]), "=r"(r[i + 1]), "=r"(r[i + 2]), "=r"(r[i + 3]), "=r"(r[i + 4]), "=r"(r[i + 5]), "=r"(r[i + 6]), "=r"(r[i + 7])
#define PTXKIT_W8(r, i) "r"(r[i]), "r"(r[i + 1]), "r"(r[i + 2]), "r"(r[i + 3]), "r"(r[i + 4]), "r"(r[i + 5]), "r"(r[i + 6]), "r"(r[i + 7])
#define PTXKIT_U32(r, i) PTXKIT_U8(r, i), PTXKIT_U8(r, i + 8), PTXKIT_U8(r, i + 16), PTXKIT_U8(r, i + 24)
#define PTXKIT_W32(r, i) PTXKIT_W8(r, i), PTXKIT_W8(r, i + 8), PTXKIT_W8(r, i + 16), PTXKIT_W8(r, i + 24)
// One tcgen05.ld/st of X columns: LIST is the brace list of X registers, the address is operand %X.
#define PTXKIT_TMEM_LD(X, LIST, ...) \
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x" #X ".b32 " LIST ", [%" #X "];" : __VA_ARGS__ : "r"(taddr) : "memory")
#define PTXKIT_TMEM_ST(X, LIST, ...) \
  asm volatile("tcgen05.st.sync.aligned.32x32b.x" #X ".b32 [%" #X "], " LIST ";" :: __VA_ARGS__, "r"(taddr) : "memory")

/// Whole warp (warp w may only touch TMEM lanes 32*(w%4) .. 32*(w%4)+31). Loads N consecutive
/// 32-bit columns starting at `taddr` (lane field = the warp's first lane) into each thread's r[]:
/// thread t gets lane (taddr.lane + t). Asynchronous: call tmem_wait_ld() before using r.
template <int N>
__device__ __forceinline__ void tmem_ld_32x32b(uint32_t taddr, uint32_t (&r)[N]) {
  if constexpr (N == 1) PTXKIT_TMEM_LD(1, "{%0}", "=r"(r[0]));
  else if constexpr (N == 2) PTXKIT_TMEM_LD(2, "{%0, %1}", "=r"(r[0]), "=r"(r[1]));
  else if constexpr (N == 4) PTXKIT_TMEM_LD(4, "{%0, %1, %2, %3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]));
  else if constexpr (N == 8) PTXKIT_TMEM_LD(8, PTXKIT_LIST8, PTXKIT_U8(r, 0));
  else if constexpr (N == 16) PTXKIT_TMEM_LD(16, PTXKIT_LIST16, PTXKIT_U8(r, 0), PTXKIT_U8(r, 8));
  else if constexpr (N == 32) PTXKIT_TMEM_LD(32, PTXKIT_LIST32, PTXKIT_U32(r, 0));
  else if constexpr (N == 64) PTXKIT_TMEM_LD(64, PTXKIT_LIST64, PTXKIT_U32(r, 0), PTXKIT_U32(r, 32));
  else if constexpr (N == 128)
    PTXKIT_TMEM_LD(128, PTXKIT_LIST128, PTXKIT_U32(r, 0), PTXKIT_U32(r, 32), PTXKIT_U32(r, 64), PTXKIT_U32(r, 96));
  else static_assert(N < 0, "tcgen05.ld.32x32b takes .x1 .. .x128 (powers of two)");
}

/// Whole warp (same lane restriction). Stores each thread's N registers into N consecutive columns
/// of its lane. Asynchronous: tmem_wait_st() before an MMA or another warp reads those columns.
template <int N>
__device__ __forceinline__ void tmem_st_32x32b(uint32_t taddr, const uint32_t (&r)[N]) {
  if constexpr (N == 1) PTXKIT_TMEM_ST(1, "{%0}", "r"(r[0]));
  else if constexpr (N == 2) PTXKIT_TMEM_ST(2, "{%0, %1}", "r"(r[0]), "r"(r[1]));
  else if constexpr (N == 4) PTXKIT_TMEM_ST(4, "{%0, %1, %2, %3}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
  else if constexpr (N == 8) PTXKIT_TMEM_ST(8, PTXKIT_LIST8, PTXKIT_W8(r, 0));
  else if constexpr (N == 16) PTXKIT_TMEM_ST(16, PTXKIT_LIST16, PTXKIT_W8(r, 0), PTXKIT_W8(r, 8));
  else if constexpr (N == 32) PTXKIT_TMEM_ST(32, PTXKIT_LIST32, PTXKIT_W32(r, 0));
  else if constexpr (N == 64) PTXKIT_TMEM_ST(64, PTXKIT_LIST64, PTXKIT_W32(r, 0), PTXKIT_W32(r, 32));
  else if constexpr (N == 128)
    PTXKIT_TMEM_ST(128, PTXKIT_LIST128, PTXKIT_W32(r, 0), PTXKIT_W32(r, 32), PTXKIT_W32(r, 64), PTXKIT_W32(r, 96));
  else static_assert(N < 0, "tcgen05.st.32x32b takes .x1 .. .x128 (powers of two)");
}

/// Whole warp. Waits until this thread's earlier tcgen05.ld results are in registers.
__device__ __forceinline__ void tmem_wait_ld() {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

/// Whole warp. Waits until this thread's earlier tcgen05.st writes are in TMEM.
__device__ __forceinline__ void tmem_wait_st() {
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
}

/// ONE thread. Copies a 128-lane x 256-bit block (8 columns of 32 bit per lane) from smem (matrix
/// descriptor, unswizzled: rows of 32 bytes) into TMEM at taddr. Asynchronous, ordered with later
/// MMAs of the same thread; completion via umma_commit. Used e.g. to stage scale factors.
template <int CtaGroup = 1>
__device__ __forceinline__ void tmem_cp_128x256b(uint32_t taddr, uint64_t smem_desc) {
  if constexpr (CtaGroup == 1) asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: "r"(taddr), "l"(smem_desc) : "memory");
  else asm volatile("tcgen05.cp.cta_group::2.128x256b [%0], %1;" :: "r"(taddr), "l"(smem_desc) : "memory");
}

/// ONE thread. Shifts the 32-bit rows of the TMEM matrix at taddr down by one lane (lane i -> i+1),
/// asynchronous like an MMA. Rarely needed outside convolution-style reuse.
template <int CtaGroup = 1>
__device__ __forceinline__ void tmem_shift_down(uint32_t taddr) {
  if constexpr (CtaGroup == 1) asm volatile("tcgen05.shift.cta_group::1.down [%0];" :: "r"(taddr) : "memory");
  else asm volatile("tcgen05.shift.cta_group::2.down [%0];" :: "r"(taddr) : "memory");
}

}  // namespace ptxkit
