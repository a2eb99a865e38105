// ptxkit/cluster.cuh: thread-block clusters and distributed shared memory (DSMEM). Launch with
// __cluster_dims__(X,1,1) on the kernel or cudaLaunchKernelEx + cudaLaunchAttributeClusterDimension.
#pragma once
#include <cstdint>
#include "common.cuh"

namespace ptxkit {

/// Any thread. This CTA's rank in its cluster (0 .. cluster_size()-1).
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// Any thread. Number of CTAs in the cluster.
__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

/// Every thread of every CTA in the cluster (aligned: all threads of a warp together). Arrive
/// half of the cluster barrier, release semantics: earlier writes (incl. DSMEM) become visible.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

/// Every thread of every CTA in the cluster. Wait half, acquire semantics.
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// Every thread of every CTA in the cluster. Full cluster barrier. Required after mbarrier init
/// before a peer may signal our barriers, and before exit while peers may still access our smem.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}

/// Any thread. Maps a local shared address to the same offset in CTA `cta_rank`'s shared memory
/// (a shared::cluster address usable with ld/st_shared_cluster and remote mbarrier operations).
__device__ __forceinline__ uint32_t map_shared_rank(const void* local, uint32_t cta_rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(smem_u32(local)), "r"(cta_rank));
  return r;
}

/// Any thread. Stores to another CTA's shared memory (address from map_shared_rank). Ordered
/// for the peer only by a later cluster barrier or a release/acquire pair.
__device__ __forceinline__ void st_shared_cluster(uint32_t cluster_addr, uint32_t value) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(cluster_addr), "r"(value) : "memory");
}

/// Any thread. Loads from another CTA's shared memory.
__device__ __forceinline__ uint32_t ld_shared_cluster(uint32_t cluster_addr) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(cluster_addr) : "memory");
  return v;
}

}  // namespace ptxkit
