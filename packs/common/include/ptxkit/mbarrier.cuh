// ptxkit/mbarrier.cuh: the 64-bit shared-memory barrier ("mbarrier") that TMA, bulk copies,
// tcgen05.commit and producer/consumer rings all signal through.
//
// Model: a barrier has a phase bit (starts at 0), a pending-arrival count (set by init, reloaded
// each phase) and a pending transaction-byte count (tx). A phase completes when arrivals reach 0
// AND tx reaches 0; then the phase bit flips and the counts reload. Waiters poll "has the phase
// with parity P completed?" Async copies decrement tx as bytes land (complete_tx).
#pragma once
#include <cstdint>
#include "common.cuh"

namespace ptxkit {

/// One thread. Sets the arrival count for every phase. Must be followed by
/// fence_mbarrier_init() (cluster use) or __syncthreads() before any other thread or the async
/// proxy touches the barrier. The object must be 8-byte aligned in shared memory.
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(bar)), "r"(arrivals) : "memory");
}

/// One thread, after the last use by everyone. Needed only before the memory is reused for
/// something else (including a re-init).
__device__ __forceinline__ void mbar_inval(uint64_t* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(smem_u32(bar)) : "memory");
}

/// Each arriving thread. Counts one arrival with release semantics (CTA scope): this thread's
/// earlier shared-memory writes are visible to threads that observe the phase complete.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem_u32(bar)) : "memory");
}

/// One thread (the producer that issues the copies). Adds `tx_bytes` expected bytes to this
/// phase, then arrives once. Issue it before or after the copies (either order is legal); the
/// byte total of all copies signalling this barrier in this phase must equal tx_bytes exactly.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(smem_u32(bar)), "r"(tx_bytes) : "memory");
}

/// One thread. Adds expected bytes without arriving (for when a second copy joins a phase
/// whose arrival was already counted).
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t tx_bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;"
               :: "r"(smem_u32(bar)), "r"(tx_bytes) : "memory");
}

/// Any thread. Non-blocking probe: true once the phase with parity `parity` has completed.
/// Acquire semantics (CTA scope) when it returns true.
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
  return done != 0;
}

/// Any thread(s). Blocks until the phase with parity `parity` completes. A consumer waiting for
/// the k-th use of a slot passes parity (k & 1); a waiter that passes the parity of a phase
/// that has not started yet returns only after that phase, so keep producer and consumer in step.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile("{\n .reg .pred p;\n PTXKIT_WAIT:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra PTXKIT_WAIT;\n}"
               :: "r"(smem_u32(bar)), "r"(parity) : "memory");
}

/// Any thread(s). Like mbar_wait but acquires at cluster scope: use it when this thread then
/// reads data that threads of other CTAs wrote with ordinary stores (DSMEM st.shared::cluster)
/// and released with mbar_arrive_cluster. Data that arrives by TMA, multicast included, needs
/// only mbar_wait: the copy's complete_tx on this CTA's own barrier makes it visible. Slow in a
/// pipeline's main loop (see mbar_arrive_cluster).
__device__ __forceinline__ void mbar_wait_cluster(uint64_t* bar, uint32_t parity) {
  asm volatile("{\n .reg .pred p;\n PTXKIT_WAITC:\n"
               " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n @!p bra PTXKIT_WAITC;\n}"
               :: "r"(smem_u32(bar)), "r"(parity) : "memory");
}

/// Each arriving thread. Arrives on the barrier at the same offset in CTA `cta_rank` of the
/// cluster with release at cluster scope: this thread's earlier writes, DSMEM stores into the peer
/// included, are visible to a peer thread that then waits with mbar_wait_cluster. Use the pair
/// when the peer reads data this thread wrote with ordinary stores.
/// Cost: do not use it (or mbar_wait_cluster) to release and re-acquire the slots of a
/// multicast-TMA ring; use mbar_arrive_remote_cta and mbar_wait. Measured on an H100 in the same
/// 2-CTA multicast GEMM: 0.617x cuBLASLt with this pair after every k step
/// (examples/reference/variants/v0_as_measured.cu) against 0.993x with mbar_arrive_remote_cta +
/// mbar_wait (examples/reference/gemm_persistent.cu). The cluster-scope kernel's SASS holds 6
/// each of MEMBAR.GPU, ERRBAR and CGAERRBAR and 11 CCTL, the other 2 each and 3.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
               " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}"
               :: "r"(smem_u32(bar)), "r"(cta_rank) : "memory");
}

/// Each arriving thread. Arrives on the barrier at the same offset in CTA `cta_rank` of the
/// cluster with mbarrier.arrive's default semantics (release at CTA scope: no cluster- or
/// GPU-scope fence). Typical use: consumers of a multicast-TMA ring tell the issuing CTA that
/// their copy of the slot is free, after wgmma_wait / their last read of it; both CTAs then wait
/// with the CTA-scope mbar_wait. That suffices because the data in a slot only ever comes by
/// TMA (its complete_tx on each CTA's own barrier makes it visible there) and the release only
/// says "done reading", not "read what I wrote". As CUTLASS's ClusterBarrier::arrive(cta_id).
/// Not for handing over data written with DSMEM stores: use mbar_arrive_cluster for that.
__device__ __forceinline__ void mbar_arrive_remote_cta(uint64_t* bar, uint32_t cta_rank) {
  asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
               " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}"
               :: "r"(smem_u32(bar)), "r"(cta_rank) : "memory");
}

/// One thread. expect_tx + arrive on the barrier at this offset in CTA `cta_rank` of the cluster.
__device__ __forceinline__ void mbar_arrive_expect_tx_cluster(uint64_t* bar, uint32_t tx_bytes, uint32_t cta_rank) {
  asm volatile("{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
               " mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [ra], %2;\n}"
               :: "r"(smem_u32(bar)), "r"(cta_rank), "r"(tx_bytes) : "memory");
}

/// A ring position for producer/consumer pipelines: slot index and the parity to wait for.
/// Advance it identically on both sides; the parity flips each time the index wraps.
template <int Stages>
struct ring_pos {
  static_assert(Stages >= 1, "a ring needs at least one stage");
  uint32_t index = 0, phase = 0;
  __device__ __forceinline__ void advance() {
    if (++index == Stages) { index = 0; phase ^= 1u; }
  }
};

}  // namespace ptxkit
