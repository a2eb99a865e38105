// GPU tests of ptxkit/mbarrier.cuh, warp.cuh, matrix.cuh and cluster.cuh on an sm_90a device:
// producer/consumer rings over many phases (bulk-copy and plain-store producers), elect.sync,
// ldmatrix/stmatrix round trips, a 2-CTA cluster (DSMEM, remote arrive, TMA multicast), and a 2-CTA
// multicast-TMA ring released with CTA-scope remote arrives (mbar_arrive_remote_cta).
#include <ptxkit/cluster.cuh>
#include <ptxkit/fence.cuh>
#include <ptxkit/matrix.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/warp.cuh>

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class PackSync : public hopper_test {};

constexpr int kStages = 3, kIters = 50, kSlotWords = 256;  // 50 uses of 3 slots: each slot flips ~17 times

__host__ __device__ uint32_t source_word(int it, int i) { return static_cast<uint32_t>(it) * 7919u + static_cast<uint32_t>(i) * 31u + 5u; }

// Producer: one elected lane waits for a free slot and fills it with a bulk copy (tx bytes);
// consumers: 64 threads wait for the full slot, sum it, and release it (64 arrivals).
__global__ void ring_bulk_kernel(const uint32_t* src, uint32_t* sums) {
  __shared__ alignas(128) uint32_t ring[kStages][kSlotWords];
  __shared__ uint64_t full[kStages], empty[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptxkit::mbar_init(&full[s], 1);
      ptxkit::mbar_init(&empty[s], 64);
    }
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  ptxkit::ring_pos<kStages> pos;
  if (threadIdx.x < 32) {
    for (int it = 0; it < kIters; ++it) {
      if (ptxkit::elect_one_sync()) {
        ptxkit::mbar_wait(&empty[pos.index], pos.phase ^ 1);
        if (it % 2 == 0) {
          ptxkit::mbar_arrive_expect_tx(&full[pos.index], kSlotWords * 4);
        } else {  // the split form: add the bytes, then arrive
          ptxkit::mbar_expect_tx(&full[pos.index], kSlotWords * 4);
          ptxkit::mbar_arrive(&full[pos.index]);
        }
        ptxkit::bulk_copy_g2s(ring[pos.index], src + it * kSlotWords, kSlotWords * 4, &full[pos.index]);
      }
      __syncwarp();
      pos.advance();
    }
  } else if (threadIdx.x < 96) {
    const int t = threadIdx.x - 32;
    uint32_t sum = 0;
    for (int it = 0; it < kIters; ++it) {
      ptxkit::mbar_wait(&full[pos.index], pos.phase);
      for (int j = t; j < kSlotWords; j += 64) sum += ring[pos.index][j] * static_cast<uint32_t>(it + 1);
      ptxkit::mbar_arrive(&empty[pos.index]);
      pos.advance();
    }
    sums[t] = sum;
  }
}

// Same ring, but the producer warp writes the slot with ordinary stores and all 32 lanes arrive.
__global__ void ring_plain_kernel(uint32_t* sums) {
  __shared__ uint32_t ring[kStages][kSlotWords];
  __shared__ uint64_t full[kStages], empty[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptxkit::mbar_init(&full[s], 32);
      ptxkit::mbar_init(&empty[s], 64);
    }
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  ptxkit::ring_pos<kStages> pos;
  if (threadIdx.x < 32) {
    for (int it = 0; it < kIters; ++it) {
      ptxkit::mbar_wait(&empty[pos.index], pos.phase ^ 1);
      for (int j = threadIdx.x; j < kSlotWords; j += 32) ring[pos.index][j] = source_word(it, j);
      ptxkit::mbar_arrive(&full[pos.index]);  // release: this lane's stores are visible to the waiters
      pos.advance();
    }
  } else if (threadIdx.x < 96) {
    const int t = threadIdx.x - 32;
    uint32_t sum = 0;
    for (int it = 0; it < kIters; ++it) {
      while (!ptxkit::mbar_try_wait(&full[pos.index], pos.phase)) {
      }
      for (int j = t; j < kSlotWords; j += 64) sum += ring[pos.index][j] * static_cast<uint32_t>(it + 1);
      ptxkit::mbar_arrive(&empty[pos.index]);
      pos.advance();
    }
    sums[t] = sum;
  }
}

std::vector<uint32_t> expected_ring_sums() {
  std::vector<uint32_t> want(64, 0);
  for (int it = 0; it < kIters; ++it)
    for (int j = 0; j < kSlotWords; ++j) want[j % 64] += source_word(it, j) * static_cast<uint32_t>(it + 1);
  return want;
}

TEST_F(PackSync, MbarrierRingWithBulkCopiesPassesEveryPhase) {
  std::vector<uint32_t> src(kIters * kSlotWords);
  for (int it = 0; it < kIters; ++it)
    for (int j = 0; j < kSlotWords; ++j) src[it * kSlotWords + j] = source_word(it, j);
  device_buffer<uint32_t> dsrc(src.size()), sums(64);
  PTXBENCH_CUDA_OK(dsrc.upload(src));
  ring_bulk_kernel<<<1, 128>>>(dsrc.ptr, sums.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> got;
  PTXBENCH_CUDA_OK(sums.download(got));
  EXPECT_EQ(got, expected_ring_sums());
}

TEST_F(PackSync, MbarrierRingWithPlainStoresPassesEveryPhase) {
  device_buffer<uint32_t> sums(64);
  ring_plain_kernel<<<1, 128>>>(sums.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> got;
  PTXBENCH_CUDA_OK(sums.download(got));
  EXPECT_EQ(got, expected_ring_sums());
}

__global__ void elect_kernel(uint32_t* lane_reported, uint32_t* elected, uint32_t* one_sync) {
  bool is_elected = false;
  const uint32_t lane = ptxkit::elect_lane_sync(is_elected);
  lane_reported[threadIdx.x] = lane;
  elected[threadIdx.x] = is_elected ? 1 : 0;
  one_sync[threadIdx.x] = ptxkit::elect_one_sync() ? 1 : 0;
}

TEST_F(PackSync, ElectSyncPicksExactlyOneLanePerWarp) {
  device_buffer<uint32_t> lanes(128), elected(128), one(128);
  elect_kernel<<<1, 128>>>(lanes.ptr, elected.ptr, one.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> l, e, o;
  PTXBENCH_CUDA_OK(lanes.download(l));
  PTXBENCH_CUDA_OK(elected.download(e));
  PTXBENCH_CUDA_OK(one.download(o));
  for (int w = 0; w < 4; ++w) {
    int count = 0, count_one = 0;
    for (int i = 0; i < 32; ++i) {
      const int t = w * 32 + i;
      EXPECT_EQ(l[t], l[w * 32]) << "every lane reports the same leader";
      if (e[t]) {
        ++count;
        EXPECT_EQ(l[t], static_cast<uint32_t>(i)) << "the leader reports its own lane";
      }
      if (o[t]) {
        ++count_one;
        EXPECT_EQ(static_cast<uint32_t>(i), l[w * 32]) << "same mask, same leader";
      }
    }
    EXPECT_EQ(count, 1) << "warp " << w;
    EXPECT_EQ(count_one, 1) << "warp " << w;
  }
}

// ldmatrix/stmatrix on a 16x16 b16 matrix M[r][c] = r*16 + c, viewed as four 8x8 quadrants.
__global__ void ldst_matrix_kernel(uint32_t* regs, uint16_t* mats) {
  __shared__ alignas(128) uint16_t m[256];  // 16-byte aligned rows are required by ldmatrix/stmatrix
  __shared__ alignas(128) uint16_t back[256];
  __shared__ alignas(128) uint16_t twice[256];
  __shared__ alignas(128) uint16_t half[256];
  for (int i = threadIdx.x; i < 256; i += 32) {
    m[i] = static_cast<uint16_t>(i);
    back[i] = twice[i] = half[i] = 0xffff;
  }
  __syncwarp();
  const int lane = threadIdx.x, q = lane / 8;
  const int row = (q % 2) * 8 + lane % 8, col = (q / 2) * 8;  // quadrant q: rows 8*(q%2).., cols 8*(q/2)..
  uint32_t r[4], t[4], r2[2];
  ptxkit::ldmatrix_x4(r, &m[row * 16 + col]);
  ptxkit::ldmatrix_x4<true>(t, &m[row * 16 + col]);
  ptxkit::ldmatrix_x2(r2, &m[row * 16 + col]);
  for (int i = 0; i < 4; ++i) regs[lane * 10 + i] = r[i];
  for (int i = 0; i < 4; ++i) regs[lane * 10 + 4 + i] = t[i];
  regs[lane * 10 + 8] = r2[0];
  regs[lane * 10 + 9] = r2[1];
  ptxkit::stmatrix_x4(&back[row * 16 + col], r);
  ptxkit::stmatrix_x4<true>(&twice[row * 16 + col], t);
  ptxkit::stmatrix_x2(&half[row * 16 + col], r2);
  __syncwarp();
  for (int i = threadIdx.x; i < 256; i += 32) {
    mats[i] = back[i];
    mats[256 + i] = twice[i];
    mats[512 + i] = half[i];
  }
}

TEST_F(PackSync, LdmatrixFragmentsAndStmatrixRoundTrip) {
  device_buffer<uint32_t> regs(320);
  device_buffer<uint16_t> mats(768);
  ldst_matrix_kernel<<<1, 32>>>(regs.ptr, mats.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> rg;
  std::vector<uint16_t> mt;
  PTXBENCH_CUDA_OK(regs.download(rg));
  PTXBENCH_CUDA_OK(mats.download(mt));
  auto M = [](int r, int c) { return static_cast<uint32_t>(r * 16 + c); };
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) {
      const int r0 = (i % 2) * 8, c0 = (i / 2) * 8, g = l / 4, c = 2 * (l % 4);
      const uint32_t plain = M(r0 + g, c0 + c) | M(r0 + g, c0 + c + 1) << 16;
      const uint32_t trans = M(r0 + c, c0 + g) | M(r0 + c + 1, c0 + g) << 16;
      EXPECT_EQ(rg[l * 10 + i], plain) << "ldmatrix x4 lane " << l << " reg " << i;
      EXPECT_EQ(rg[l * 10 + 4 + i], trans) << "ldmatrix x4.trans lane " << l << " reg " << i;
      if (i < 2) EXPECT_EQ(rg[l * 10 + 8 + i], plain) << "ldmatrix x2 lane " << l << " reg " << i;
    }
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(mt[i], i) << "stmatrix x4 of ldmatrix x4";
    EXPECT_EQ(mt[256 + i], i) << "stmatrix x4.trans of ldmatrix x4.trans";
    EXPECT_EQ(mt[512 + i], (i % 16) < 8 ? i : 0xffff) << "stmatrix x2 writes the left two quadrants";
  }
}

// Two CTAs per cluster: DSMEM stores/loads, a remote arrive, and a TMA multicast in which each CTA
// loads half of a 64x64 tile for both CTAs. Each CTA's barrier expects the whole tile: its own
// half announced locally and the peer's half announced remotely (arrival count 2).
__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(const __grid_constant__ CUtensorMap map, uint32_t* info,
                                                          uint16_t* tiles) {
  __shared__ uint8_t raw[8192 + 1024];
  __shared__ uint64_t full, ping;
  __shared__ uint32_t mailbox;
  uint8_t* tile = align1024(raw);
  const uint32_t rank = ptxkit::cluster_ctarank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&full, 2);
    ptxkit::mbar_init(&ping, 1);
    mailbox = 0;
    ptxkit::fence_mbarrier_init();
  }
  ptxkit::cluster_sync();  // peers' barriers are initialised before anyone signals them
  if (threadIdx.x == 0) ptxkit::st_shared_cluster(ptxkit::map_shared_rank(&mailbox, peer), 100 + rank);
  ptxkit::cluster_sync();
  const uint32_t got = mailbox;
  const uint32_t mine_at_peer = ptxkit::ld_shared_cluster(ptxkit::map_shared_rank(&mailbox, peer));
  if (threadIdx.x == 0) ptxkit::mbar_arrive_cluster(&ping, peer);
  ptxkit::mbar_wait_cluster(&ping, 0);
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&full, 4096);                  // my half, into my barrier
    ptxkit::mbar_arrive_expect_tx_cluster(&full, 4096, peer);    // my half, into the peer's barrier
    ptxkit::tma_load_2d_multicast(tile + rank * 4096, &map, &full, 0, 32 * rank, 0x3);
  }
  ptxkit::mbar_wait_cluster(&full, 0);
  for (int i = threadIdx.x; i < 4096; i += blockDim.x) tiles[blockIdx.x * 4096 + i] = reinterpret_cast<uint16_t*>(tile)[i];
  if (threadIdx.x == 0) {
    info[blockIdx.x * 4 + 0] = rank;
    info[blockIdx.x * 4 + 1] = ptxkit::cluster_size();
    info[blockIdx.x * 4 + 2] = got;
    info[blockIdx.x * 4 + 3] = mine_at_peer;
  }
  ptxkit::cluster_sync();  // no CTA exits while its peer may still touch its shared memory
}

TEST_F(PackSync, ClusterOfTwoSharesMemoryBarriersAndMulticast) {
  std::vector<uint16_t> host(64 * 64);
  for (int i = 0; i < 64 * 64; ++i) host[i] = static_cast<uint16_t>(i * 3 + 1);
  device_buffer<uint16_t> g(host.size()), tiles(4 * 4096);
  device_buffer<uint32_t> info(16);
  PTXBENCH_CUDA_OK(g.upload(host));
  const CUtensorMap map = ptxkit::make_tma_2d_bf16(g.ptr, 64, 64, 64, 32, 64, ptxkit::swizzle::none);
  cluster_kernel<<<4, 128>>>(map, info.ptr, tiles.ptr);  // two clusters of two CTAs
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> inf;
  std::vector<uint16_t> t;
  PTXBENCH_CUDA_OK(info.download(inf));
  PTXBENCH_CUDA_OK(tiles.download(t));
  for (int b = 0; b < 4; ++b) {
    const uint32_t rank = b % 2;
    EXPECT_EQ(inf[b * 4 + 0], rank) << "block " << b;
    EXPECT_EQ(inf[b * 4 + 1], 2u);
    EXPECT_EQ(inf[b * 4 + 2], 100 + (rank ^ 1)) << "DSMEM store from the peer";
    EXPECT_EQ(inf[b * 4 + 3], 100 + rank) << "DSMEM load of what we stored at the peer";
    for (int i = 0; i < 4096; ++i) ASSERT_EQ(t[b * 4096 + i], host[i]) << "block " << b << " element " << i;
  }
}

// The ring of a 2-CTA multicast GEMM (examples/reference/gemm_persistent.cu) at CTA scope: per use of
// a slot each CTA multicasts its 32-row half of a 64x64 bf16 tile into both CTAs' slot, each CTA's full
// barrier expects the whole tile, consumers wait with the CTA-scope mbar_wait, and lane 0 of each
// consumer warp releases the slot in both CTAs (mbar_arrive + mbar_arrive_remote_cta), so empty[s]
// counts 2 warps x 2 CTAs. A missing or misdirected remote arrive stalls the producer (trap).
constexpr int kMcStages = 3, kMcIters = 50, kMcTile = 64 * 64;

uint16_t mc_value(int row, int col) { return static_cast<uint16_t>((row * 131 + col * 7 + 3) & 0x3fff); }

__global__ void __cluster_dims__(2, 1, 1) multicast_ring_kernel(const __grid_constant__ CUtensorMap map, uint32_t* sums) {
  __shared__ alignas(128) uint16_t ring[kMcStages][kMcTile];
  __shared__ uint64_t full[kMcStages], empty[kMcStages];
  const uint32_t rank = ptxkit::cluster_ctarank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kMcStages; ++s) {
      ptxkit::mbar_init(&full[s], 1);
      ptxkit::mbar_init(&empty[s], 4);
    }
    ptxkit::fence_mbarrier_init();
  }
  ptxkit::cluster_sync();  // the peer's barriers are initialised before anyone signals them
  ptxkit::ring_pos<kMcStages> pos;
  if (threadIdx.x < 32) {
    for (int it = 0; it < kMcIters; ++it) {
      if (ptxkit::elect_one_sync()) {
        wait_or_trap(&empty[pos.index], pos.phase ^ 1);  // released by both CTAs' consumers
        ptxkit::mbar_arrive_expect_tx(&full[pos.index], kMcTile * 2);  // my half + the peer's half
        ptxkit::tma_load_2d_multicast(ring[pos.index] + rank * (kMcTile / 2), &map, &full[pos.index], 0,
                                      it * 64 + 32 * static_cast<int>(rank), 0x3);
      }
      __syncwarp();
      pos.advance();
    }
  } else {
    const int t = threadIdx.x - 32;
    uint32_t sum = 0;
    for (int it = 0; it < kMcIters; ++it) {
      ptxkit::mbar_wait(&full[pos.index], pos.phase);
      for (int j = t; j < kMcTile; j += 64) sum += ring[pos.index][j] * static_cast<uint32_t>(it + 1);
      __syncwarp();
      if (ptxkit::lane_id() == 0) {
        ptxkit::mbar_arrive(&empty[pos.index]);
        ptxkit::mbar_arrive_remote_cta(&empty[pos.index], peer);
      }
      pos.advance();
    }
    sums[blockIdx.x * 64 + t] = sum;
  }
  ptxkit::cluster_sync();  // no CTA exits while its peer may still multicast into it or arrive on it
}

TEST_F(PackSync, MulticastRingReleasedWithCtaScopeRemoteArrives) {
  std::vector<uint16_t> host(kMcIters * kMcTile);
  for (int r = 0; r < kMcIters * 64; ++r)
    for (int c = 0; c < 64; ++c) host[r * 64 + c] = mc_value(r, c);
  device_buffer<uint16_t> g(host.size());
  device_buffer<uint32_t> sums(4 * 64);
  PTXBENCH_CUDA_OK(g.upload(host));
  const CUtensorMap map = ptxkit::make_tma_2d_bf16(g.ptr, kMcIters * 64, 64, 64, 32, 64, ptxkit::swizzle::none);
  multicast_ring_kernel<<<4, 96>>>(map, sums.ptr);  // two clusters of two CTAs
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> got;
  PTXBENCH_CUDA_OK(sums.download(got));
  std::vector<uint32_t> want(64, 0);
  for (int it = 0; it < kMcIters; ++it)
    for (int j = 0; j < kMcTile; ++j) want[j % 64] += host[it * kMcTile + j] * static_cast<uint32_t>(it + 1);
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 64; ++t) EXPECT_EQ(got[b * 64 + t], want[t]) << "block " << b << " consumer thread " << t;
}

}  // namespace
}  // namespace ptxbench::gpu_test
