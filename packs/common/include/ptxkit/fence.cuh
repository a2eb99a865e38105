// ptxkit/fence.cuh: proxy fences and named barriers. The generic proxy (ordinary ld/st) and the
// async proxy (TMA, bulk copies, wgmma/tcgen05 operand reads) see shared memory through different
// paths; a fence.proxy.async is the only thing that orders one against the other.
#pragma once
#include <cstdint>

namespace ptxkit {

/// Each writing thread (or all threads, then a barrier). Orders this thread's earlier
/// generic-proxy shared-memory writes before later async-proxy accesses (TMA store reads,
/// wgmma/tcgen05 descriptor reads) of the same CTA's shared memory. Write, fence, barrier, issue.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// Each thread. Same as fence_proxy_async_smem for all state spaces (global too), e.g. before
/// a TMA reads global data that this kernel wrote with ordinary stores.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async;" ::: "memory");
}

/// The initialising thread, right after its mbar_init calls. Makes the initialised barriers
/// visible to the async proxy and to other CTAs of the cluster (release, cluster scope); follow
/// it with cluster_sync() (clusters) or __syncthreads() (single CTA).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/// Each thread. Full acquire-release fence at cluster scope (for flag-style DSMEM protocols).
__device__ __forceinline__ void fence_acq_rel_cluster() {
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
}

/// `Threads` threads (a multiple of 32, whole warps). Waits until `Threads` threads have arrived
/// at named barrier `id` (1..15; 0 is __syncthreads). Use it to sync one warpgroup or a pair of
/// warpgroups without stalling the producer warp.
template <int Threads>
__device__ __forceinline__ void named_barrier_sync(uint32_t id) {
  static_assert(Threads % 32 == 0 && Threads > 0 && Threads <= 1024, "named barrier counts whole warps");
  asm volatile("bar.sync %0, %1;" :: "r"(id), "n"(Threads) : "memory");
}

/// Whole warps. Arrives at named barrier `id` without waiting (the other side calls
/// named_barrier_sync with the same total count). Used for ping-pong scheduling between warpgroups.
template <int Threads>
__device__ __forceinline__ void named_barrier_arrive(uint32_t id) {
  static_assert(Threads % 32 == 0 && Threads > 0 && Threads <= 1024, "named barrier counts whole warps");
  asm volatile("bar.arrive %0, %1;" :: "r"(id), "n"(Threads) : "memory");
}

}  // namespace ptxkit
