// ptxkit/tma.cuh: TMA tensor copies (cp.async.bulk.tensor), plain bulk copies (cp.async.bulk) and
// their completion groups. Loads complete on an mbarrier (complete_tx); stores complete through
// bulk groups (commit + wait). Host-side map encoding is in ptxkit/tensor_map.cuh.
//
// Rules that every function here shares: one thread issues (elect_one_sync or threadIdx.x == 0);
// shared-memory destinations/sources are 128-byte aligned (1024 for 128B swizzle); coordinates
// are element indices, innermost first, and may be negative or past the end (OOB loads fill 0).
#pragma once
#include <cstdint>
#include <cuda.h>
#include "common.cuh"

namespace ptxkit {

/// One thread, early in the kernel. Pulls the 128-byte tensor map into the TMA descriptor cache.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" :: "l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/// One thread. Loads the box at {c0, c1} into smem `dst`; completes `box bytes` of tx on `bar`
/// (pair with mbar_arrive_expect_tx of the same byte count). Async proxy writes smem.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1) : "memory");
}

/// One thread. 3D variant: box at {c0, c1, c2} (c0 innermost).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0, int32_t c1,
                                            int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

/// One thread of one CTA. Loads the box once from L2 and writes it to the same smem offset in
/// every CTA whose bit is set in `cta_mask` (bit i = cluster rank i); each destination CTA's
/// barrier at `bar`'s offset receives the box bytes as tx, so each must expect them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                                      int32_t c1, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

/// One thread of one CTA. 3D multicast variant.
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int32_t c0,
                                                      int32_t c1, int32_t c2, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4, %5}], [%2], %6;"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2),
         "h"(cta_mask) : "memory");
}

/// One thread, after the smem tile is written AND fenced (fence_proxy_async_smem by the writers,
/// then a barrier). Stores the box at {c0, c1}; OOB parts are skipped. Completion: bulk group.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1) : "memory");
}

/// One thread. 3D store variant.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1,
                                             int32_t c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

/// One thread. Element-wise atomic add of the smem box into global at {c0, c1} (the map's dtype,
/// e.g. fp32 dQ partial sums from several CTAs). Same fencing and completion as tma_store_2d.
__device__ __forceinline__ void tma_reduce_add_2d(const CUtensorMap* map, const void* src, int32_t c0, int32_t c1) {
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1) : "memory");
}

/// One thread. Hints L2 to fetch the box at {c0, c1} (no smem, no completion to wait for).
__device__ __forceinline__ void tma_prefetch_2d(const CUtensorMap* map, int32_t c0, int32_t c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               :: "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1) : "memory");
}

/// One thread. Contiguous copy of `bytes` (multiple of 16; src/dst 16-byte aligned) from global
/// to smem; completes `bytes` of tx on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
}

/// One thread, after fencing the smem source like tma_store_2d. Contiguous smem -> global copy.
__device__ __forceinline__ void bulk_copy_s2g(void* dst, const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               :: "l"(dst), "r"(smem_u32(src)), "r"(bytes) : "memory");
}

/// One thread. L2 prefetch of a contiguous global range (multiple of 16 bytes).
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(src), "r"(bytes) : "memory");
}

/// The storing thread. Closes the group of bulk stores issued since the last commit.
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// The storing thread. Waits until at most N committed groups are pending and their global
/// writes are complete (before the kernel's results are relied on, e.g. at exit).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  static_assert(N >= 0 && N <= 63, "wait_group count is an immediate in 0..63");
  asm volatile("cp.async.bulk.wait_group %0;" :: "n"(N) : "memory");
}

/// The storing thread. Waits until at most N groups still READ their smem source, so the
/// staging buffer may be overwritten (cheaper than bulk_wait_group; use it in epilogue loops).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  static_assert(N >= 0 && N <= 63, "wait_group count is an immediate in 0..63");
  asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory");
}

}  // namespace ptxkit
