// ptxkit/tma_sm100.cuh: the Blackwell additions to ptxkit/tma.cuh for CTA pairs (cta_group::2).
// In a pair, each CTA loads its own half of the operands into its own smem, but the transaction
// bytes must complete on the LEADER CTA's mbarrier, because only the leader issues the pair MMA
// and waits for the data. Pass the leader's barrier as a cluster address (pair_leader_barrier).
#pragma once
#include <cstdint>
#include <cuda.h>
#include "cluster.cuh"
#include "common.cuh"
#include "tma.cuh"

namespace ptxkit {

/// Any thread. Cluster address of the barrier at `bar`'s offset in this pair's leader CTA (even
/// cluster rank). The leader's barrier must expect the bytes of BOTH CTAs' loads.
__device__ __forceinline__ uint32_t pair_leader_barrier(uint64_t* bar) {
  return map_shared_rank(bar, cluster_ctarank() & ~1u);
}

/// One thread in each CTA of the pair. Loads the box at {c0, c1} into this CTA's smem `dst` and
/// completes its bytes on the leader's barrier (`leader_bar` from pair_leader_barrier).
__device__ __forceinline__ void tma_load_2d_cg2(void* dst, const CUtensorMap* map, uint32_t leader_bar, int32_t c0,
                                                int32_t c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(leader_bar), "r"(c0), "r"(c1) : "memory");
}

/// One thread in each CTA of the pair. 3D variant of tma_load_2d_cg2.
__device__ __forceinline__ void tma_load_3d_cg2(void* dst, const CUtensorMap* map, uint32_t leader_bar, int32_t c0,
                                                int32_t c1, int32_t c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(leader_bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

/// One thread. Multicast load for pairs: the box lands at `dst`'s offset in every CTA of
/// `cta_mask`, and each destination pair's bytes complete on that pair's leader barrier.
__device__ __forceinline__ void tma_load_2d_cg2_multicast(void* dst, const CUtensorMap* map, uint32_t leader_bar,
                                                          int32_t c0, int32_t c1, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      :: "r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(leader_bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

}  // namespace ptxkit
