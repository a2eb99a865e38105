// GPU tests of the sm90a wrappers that the TMA, sync and wgmma suites do not call directly, so that
// every Hopper wrapper (packs/common/include/ptxkit, packs/sm90a/include/ptxkit) runs on the GPU with a checked result:
// common.cuh's helpers, fence_proxy_async before a bulk store, a named_barrier_arrive ping-pong,
// mbar_inval and re-initialisation, cluster_arrive/cluster_wait with a fence_acq_rel_cluster message
// over DSMEM, tma_load_3d_multicast, and store_acc_bf16's clipping.
#include <cmath>

#include <ptxkit/cluster.cuh>
#include <ptxkit/common.cuh>
#include <ptxkit/fence.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>
#include <ptxkit/wgmma.cuh>

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class PackMisc : public hopper_test {};

static_assert(ptxkit::bytes_of<__nv_bfloat16>(64 * 64) == 8192, "bytes_of counts element bytes");
static_assert(ptxkit::bytes_of<float>(3) == 12, "bytes_of counts element bytes");

__global__ void common_kernel(uint32_t* ids, float* ex, uint32_t* smid) {
  const uint32_t t = threadIdx.x;
  if (blockIdx.x == 0) {
    ids[2 * t] = ptxkit::lane_id();
    ids[2 * t + 1] = ptxkit::warp_id();
    ex[t] = ptxkit::exp2_approx(-8.0f + 0.125f * static_cast<float>(t));
  }
  if (t == 0) smid[blockIdx.x] = ptxkit::sm_id();
}

TEST_F(PackMisc, CommonHelpersReportLaneWarpSmAndExp2) {
  constexpr int blocks = 8;
  device_buffer<uint32_t> ids(256), smid(blocks);
  device_buffer<float> ex(128);
  common_kernel<<<blocks, 128>>>(ids.ptr, ex.ptr, smid.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> i, s;
  std::vector<float> e;
  PTXBENCH_CUDA_OK(ids.download(i));
  PTXBENCH_CUDA_OK(smid.download(s));
  PTXBENCH_CUDA_OK(ex.download(e));
  cudaDeviceProp p{};
  PTXBENCH_CUDA_OK(cudaGetDeviceProperties(&p, 0));
  for (uint32_t t = 0; t < 128; ++t) {
    EXPECT_EQ(i[2 * t], t % 32) << "lane_id of thread " << t;
    EXPECT_EQ(i[2 * t + 1], t / 32) << "warp_id of thread " << t;
    const double x = -8.0 + 0.125 * t, want = std::exp2(x);
    EXPECT_LE(std::fabs(e[t] - want), 4e-7 * want) << "exp2_approx(" << x << ")";
  }
  for (int b = 0; b < blocks; ++b) EXPECT_LT(s[b], static_cast<uint32_t>(p.multiProcessorCount)) << "sm_id of block " << b;
}

// Generic-proxy stores into smem, fence_proxy_async (all state spaces), then the async proxy (a bulk
// copy) reads them; the staging buffer is rewritten every round once the copy has read it.
__global__ void generic_then_bulk_store_kernel(uint32_t* out, int rounds) {
  __shared__ alignas(128) uint32_t buf[1024];
  for (int r = 0; r < rounds; ++r) {
    for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] = static_cast<uint32_t>(r) * 1000003u + i;
    ptxkit::fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
      ptxkit::bulk_copy_s2g(out + r * 1024, buf, 4096);
      ptxkit::bulk_commit_group();
      ptxkit::bulk_wait_group_read<0>();
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) ptxkit::bulk_wait_group<0>();
}

TEST_F(PackMisc, FenceProxyAsyncOrdersGenericStoresBeforeABulkStore) {
  constexpr int rounds = 16;
  device_buffer<uint32_t> out(rounds * 1024);
  PTXBENCH_CUDA_OK(cudaMemset(out.ptr, 0, rounds * 4096));
  generic_then_bulk_store_kernel<<<1, 256>>>(out.ptr, rounds);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> o;
  PTXBENCH_CUDA_OK(out.download(o));
  for (int r = 0; r < rounds; ++r)
    for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(o[r * 1024 + i], static_cast<uint32_t>(r) * 1000003u + i) << r << "," << i;
}

// Warp 0 produces a value per round and arrives at barrier 1 without waiting; warp 1 waits there,
// reads, and arrives at barrier 2, which the producer waits on before the next round.
__global__ void named_barrier_kernel(uint32_t* seen, int rounds) {
  __shared__ uint32_t box;
  const uint32_t warp = ptxkit::warp_id();
  for (int r = 0; r < rounds; ++r) {
    if (warp == 0) {
      if (ptxkit::lane_id() == 0) box = static_cast<uint32_t>(r) * 7u + 3u;
      ptxkit::named_barrier_arrive<64>(1);
      ptxkit::named_barrier_sync<64>(2);
    } else {
      ptxkit::named_barrier_sync<64>(1);
      if (ptxkit::lane_id() == 0) seen[r] = box;
      ptxkit::named_barrier_arrive<64>(2);
    }
  }
}

TEST_F(PackMisc, NamedBarrierArrivePingPongHandsOverEveryRound) {
  constexpr int rounds = 200;
  device_buffer<uint32_t> seen(rounds);
  named_barrier_kernel<<<1, 64>>>(seen.ptr, rounds);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> s;
  PTXBENCH_CUDA_OK(seen.download(s));
  for (int r = 0; r < rounds; ++r) ASSERT_EQ(s[r], static_cast<uint32_t>(r) * 7u + 3u) << "round " << r;
}

// A barrier used once, invalidated, re-initialised with another count (its phase starts at 0
// again), used, invalidated, and its 8 bytes reused as ordinary shared memory.
__global__ void mbar_inval_kernel(uint32_t* out) {
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) ptxkit::mbar_arrive(&bar);
  wait_or_trap(&bar, 0);
  __syncthreads();  // everyone has seen phase 0 complete before the barrier goes away
  if (threadIdx.x == 0) {
    ptxkit::mbar_inval(&bar);
    ptxkit::mbar_init(&bar, blockDim.x);
    ptxkit::fence_mbarrier_init();
    out[0] = ptxkit::mbar_try_wait(&bar, 0) ? 1u : 0u;  // must be 0: a fresh phase 0, no arrivals yet
  }
  __syncthreads();
  ptxkit::mbar_arrive(&bar);
  wait_or_trap(&bar, 0);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[1] = 1;  // the second use completed
    ptxkit::mbar_inval(&bar);
    bar = 0x0123456789abcdefull;
    out[2] = static_cast<uint32_t>(*reinterpret_cast<volatile uint64_t*>(&bar) >> 32);
  }
}

TEST_F(PackMisc, MbarInvalLetsTheBarrierBeReinitialisedAndReused) {
  device_buffer<uint32_t> out(3);
  PTXBENCH_CUDA_OK(cudaMemset(out.ptr, 0xff, 12));
  mbar_inval_kernel<<<1, 96>>>(out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> o;
  PTXBENCH_CUDA_OK(out.download(o));
  EXPECT_EQ(o[0], 0u) << "the re-initialised barrier must start a pending phase 0";
  EXPECT_EQ(o[1], 1u);
  EXPECT_EQ(o[2], 0x01234567u);
}

__device__ __forceinline__ void st_relaxed_cluster(uint32_t cluster_addr, uint32_t v) {
  asm volatile("st.relaxed.cluster.shared::cluster.u32 [%0], %1;" :: "r"(cluster_addr), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t ld_relaxed_cluster(const uint32_t* local) {
  uint32_t v;
  asm volatile("ld.relaxed.cluster.shared::cta.u32 %0, [%1];" : "=r"(v) : "r"(ptxkit::smem_u32(local)) : "memory");
  return v;
}

// Each CTA of a 2-CTA cluster writes 64 words into its peer's shared memory, then raises a flag
// there: data, fence_acq_rel_cluster, relaxed flag store; the reader polls its flag (relaxed), fences,
// and reads the data. The split cluster barrier (arrive, wait) orders the flag's clearing first.
__global__ void __cluster_dims__(2, 1, 1) cluster_message_kernel(uint32_t* out) {
  __shared__ uint32_t data[64];
  __shared__ uint32_t flag;
  const uint32_t rank = ptxkit::cluster_ctarank(), peer = rank ^ 1;
  if (threadIdx.x == 0) flag = 0;
  ptxkit::cluster_arrive();
  ptxkit::cluster_wait();
  if (threadIdx.x < 64)
    ptxkit::st_shared_cluster(ptxkit::map_shared_rank(&data[threadIdx.x], peer), 1000 * (rank + 1) + threadIdx.x);
  ptxkit::fence_acq_rel_cluster();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::fence_acq_rel_cluster();
    st_relaxed_cluster(ptxkit::map_shared_rank(&flag, peer), 1);
    const long long start = clock64();
    while (ld_relaxed_cluster(&flag) == 0)
      if (clock64() - start > 4000000000LL) __trap();
    ptxkit::fence_acq_rel_cluster();
  }
  __syncthreads();
  if (threadIdx.x < 64) out[blockIdx.x * 64 + threadIdx.x] = data[threadIdx.x];
  ptxkit::cluster_arrive();  // no CTA exits while its peer may still write into it
  ptxkit::cluster_wait();
}

TEST_F(PackMisc, ClusterFlagWithAcqRelFencesDeliversThePeersData) {
  constexpr int blocks = 8;  // four clusters
  device_buffer<uint32_t> out(blocks * 64);
  cluster_message_kernel<<<blocks, 128>>>(out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> o;
  PTXBENCH_CUDA_OK(out.download(o));
  for (int b = 0; b < blocks; ++b) {
    const uint32_t peer = (b % 2) ^ 1;
    for (uint32_t t = 0; t < 64; ++t) ASSERT_EQ(o[b * 64 + t], 1000 * (peer + 1) + t) << "block " << b << " word " << t;
  }
}

// 3D multicast: a [4][32][64] bf16 tensor; each CTA of a 2-CTA cluster loads the 1x8x64 box at
// z = 1 + rank, y = 8 for both CTAs. Each CTA's barrier expects both halves (count 2: its own
// announcement and the peer's remote one).
__global__ void __cluster_dims__(2, 1, 1) multicast_3d_kernel(const __grid_constant__ CUtensorMap map, uint16_t* tiles) {
  __shared__ uint8_t raw[2048 + 1024];
  __shared__ uint64_t full;
  uint8_t* tile = align1024(raw);
  const uint32_t rank = ptxkit::cluster_ctarank(), peer = rank ^ 1;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&full, 2);
    ptxkit::fence_mbarrier_init();
  }
  ptxkit::cluster_sync();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&full, 1024);
    ptxkit::mbar_arrive_expect_tx_cluster(&full, 1024, peer);
    ptxkit::tma_load_3d_multicast(tile + rank * 1024, &map, &full, 0, 8, 1 + rank, 0x3);
  }
  ptxkit::mbar_wait_cluster(&full, 0);
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) tiles[blockIdx.x * 1024 + i] = reinterpret_cast<uint16_t*>(tile)[i];
  ptxkit::cluster_sync();
}

TEST_F(PackMisc, TmaLoad3DMulticastFillsBothCtas) {
  constexpr int d2 = 4, d1 = 32, d0 = 64;
  std::vector<uint16_t> host(d2 * d1 * d0);
  for (int i = 0; i < d2 * d1 * d0; ++i) host[i] = static_cast<uint16_t>(i * 5 + 2);
  device_buffer<uint16_t> g(host.size()), tiles(4 * 1024);
  PTXBENCH_CUDA_OK(g.upload(host));
  PTXBENCH_CUDA_OK(cudaMemset(tiles.ptr, 0, 4 * 1024 * 2));
  const CUtensorMap map = ptxkit::make_tma_3d_bf16(g.ptr, d2, d1, d0, d0, d1 * d0, 1, 8, 64, ptxkit::swizzle::none);
  multicast_3d_kernel<<<4, 128>>>(map, tiles.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> t;
  PTXBENCH_CUDA_OK(tiles.download(t));
  for (int b = 0; b < 4; ++b)
    for (int z = 0; z < 2; ++z)
      for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 64; ++x)
          ASSERT_EQ(t[b * 1024 + (z * 8 + y) * 64 + x], host[((1 + z) * d1 + 8 + y) * d0 + x])
              << "block " << b << " z " << z << " y " << y << " x " << x;
}

// store_acc_bf16 writes an m64n64 accumulator fragment (here: each register holds its own row or
// column index, exact in bf16) to a row-major bf16 matrix with leading dimension 72, clipped to
// rows_left x cols_left; an odd cols_left exercises the single-element path.
__global__ void store_acc_kernel(__nv_bfloat16* out, int rows_left, int cols_left, int value_is_col) {
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = static_cast<float>(value_is_col ? ptxkit::acc_col(i) : ptxkit::acc_row(i));
  ptxkit::store_acc_bf16(d, out, 72, rows_left, cols_left);
}

void check_store_acc(int rows_left, int cols_left) {
  constexpr int ld = 72;
  for (int value_is_col = 0; value_is_col < 2; ++value_is_col) {
    device_buffer<uint16_t> out(64 * ld);
    PTXBENCH_CUDA_OK(cudaMemset(out.ptr, 0xff, 64 * ld * 2));
    store_acc_kernel<<<1, 128>>>(reinterpret_cast<__nv_bfloat16*>(out.ptr), rows_left, cols_left, value_is_col);
    PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> o;
    PTXBENCH_CUDA_OK(out.download(o));
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < ld; ++c) {
        const bool inside = r < rows_left && c < cols_left && c < 64;
        const uint16_t want = inside ? bf16_bits(static_cast<float>(value_is_col ? c : r)) : uint16_t{0xffff};
        ASSERT_EQ(o[r * ld + c], want) << (value_is_col ? "column" : "row") << " values, element " << r << "," << c;
      }
  }
}

TEST_F(PackMisc, StoreAccBf16WritesEveryElementOfTheTile) { check_store_acc(64, 64); }
TEST_F(PackMisc, StoreAccBf16ClipsRowsAndAnOddColumnCount) { check_store_acc(50, 37); }

}  // namespace
}  // namespace ptxbench::gpu_test
