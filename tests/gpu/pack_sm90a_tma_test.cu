// GPU tests of ptxkit/tma.cuh and ptxkit/tensor_map.cuh on an sm_90a device: every swizzle mode
// places each element where the documented swizzle formula says, out-of-bounds boxes fill zeros
// and clip stores, 3D boxes, reduce-add, and plain bulk copies round-trip.
#include <ptxkit/fence.cuh>
#include <ptxkit/mbarrier.cuh>
#include <ptxkit/tensor_map.cuh>
#include <ptxkit/tma.cuh>

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

using ptxkit::swizzle;

constexpr int kRows = 64, kCols = 256;  // the global test matrix; element (r, c) holds bits r*256+c

class PackTma : public hopper_test {};

__global__ void tma_load_2d_kernel(const __grid_constant__ CUtensorMap map, int c0, int r0, uint32_t bytes,
                                   uint8_t* out) {
  __shared__ uint8_t raw[8192 + 1024];
  __shared__ uint64_t bar;
  uint8_t* tile = align1024(raw);
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
    ptxkit::prefetch_tensormap(&map);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, bytes);
    ptxkit::tma_load_2d(tile, &map, &bar, c0, r0);
  }
  wait_or_trap(&bar, 0);
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = tile[i];
}

struct load_case {
  swizzle sw;
  int c0, r0;
};

void PrintTo(const load_case& c, std::ostream* os) {
  *os << "swizzle " << static_cast<int>(c.sw) << " box at (" << c.c0 << ", " << c.r0 << ")";
}

class PackTmaLoad2D : public hopper_test, public ::testing::WithParamInterface<load_case> {};

TEST_P(PackTmaLoad2D, EveryElementLandsAtItsSwizzledOffset) {
  const load_case lc = GetParam();
  const uint32_t span = static_cast<uint32_t>(lc.sw);
  const int box_cols = span ? static_cast<int>(span / 2) : 64, box_rows = 32;
  const uint32_t row_bytes = box_cols * 2, bytes = box_rows * row_bytes;
  std::vector<uint16_t> host(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) host[i] = static_cast<uint16_t>(i);
  device_buffer<uint16_t> g(host.size());
  device_buffer<uint8_t> out(bytes);
  PTXBENCH_CUDA_OK(g.upload(host));
  const CUtensorMap map = ptxkit::make_tma_2d_bf16(g.ptr, kRows, kCols, kCols, box_rows, box_cols, lc.sw);
  tma_load_2d_kernel<<<1, 128>>>(map, lc.c0, lc.r0, bytes, out.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint8_t> tile;
  PTXBENCH_CUDA_OK(out.download(tile));
  int bad = 0;
  for (int r = 0; r < box_rows; ++r)
    for (int c = 0; c < box_cols; ++c) {
      const uint32_t at = host_swizzle(r * row_bytes + c * 2, span);
      const uint16_t got = static_cast<uint16_t>(tile[at] | tile[at + 1] << 8);
      const int gr = lc.r0 + r, gc = lc.c0 + c;
      const uint16_t want = gr < kRows && gc < kCols ? static_cast<uint16_t>(gr * kCols + gc) : 0;
      if (got != want && bad++ < 5)
        ADD_FAILURE() << "swizzle " << span << " box (" << r << "," << c << ") at byte " << at << ": got " << got
                      << " want " << want;
    }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(Swizzles, PackTmaLoad2D,
                         ::testing::Values(load_case{swizzle::none, 64, 16}, load_case{swizzle::b32, 64, 16},
                                           load_case{swizzle::b64, 64, 16}, load_case{swizzle::b128, 64, 16},
                                           load_case{swizzle::none, 224, 48}, load_case{swizzle::b32, 248, 48},
                                           load_case{swizzle::b64, 240, 48}, load_case{swizzle::b128, 224, 48}),
                         [](const auto& info) {
                           return "swizzle" + std::to_string(static_cast<int>(info.param.sw)) +
                                  (info.param.r0 == 48 ? "_out_of_bounds" : "_inside");
                         });

template <swizzle Sw>
__global__ void tma_store_2d_kernel(const __grid_constant__ CUtensorMap map, int c0, int r0, int box_cols) {
  __shared__ uint8_t raw[8192 + 1024];
  uint8_t* tile = align1024(raw);
  const int box_rows = 32;
  for (int i = threadIdx.x; i < box_rows * box_cols; i += blockDim.x) {
    const int r = i / box_cols, c = i % box_cols;
    *reinterpret_cast<uint16_t*>(tile + ptxkit::swizzle_offset<Sw>(r * box_cols * 2 + c * 2)) =
        static_cast<uint16_t>(1000 + r * 64 + c);
  }
  ptxkit::fence_proxy_async_smem();  // generic writes -> async-proxy read by the TMA store
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::tma_store_2d(&map, tile, c0, r0);
    ptxkit::bulk_commit_group();
    ptxkit::bulk_wait_group<0>();
  }
}

template <swizzle Sw>
void check_store(int c0, int r0) {
  const int box_cols = Sw == swizzle::none ? 64 : static_cast<int>(Sw) / 2, box_rows = 32;
  device_buffer<uint16_t> g(kRows * kCols);
  PTXBENCH_CUDA_OK(cudaMemset(g.ptr, 0xff, kRows * kCols * 2));
  const CUtensorMap map = ptxkit::make_tma_2d_bf16(g.ptr, kRows, kCols, kCols, box_rows, box_cols, Sw);
  tma_store_2d_kernel<Sw><<<1, 128>>>(map, c0, r0, box_cols);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> host;
  PTXBENCH_CUDA_OK(g.download(host));
  int bad = 0;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      const bool inside = r >= r0 && r < r0 + box_rows && c >= c0 && c < c0 + box_cols;
      const uint16_t want = inside ? static_cast<uint16_t>(1000 + (r - r0) * 64 + (c - c0)) : 0xffff;
      if (host[r * kCols + c] != want && bad++ < 5)
        ADD_FAILURE() << "global (" << r << "," << c << "): got " << host[r * kCols + c] << " want " << want;
    }
  EXPECT_EQ(bad, 0);
}

TEST_F(PackTma, TmaStore2DUnswizzledWritesOnlyTheBox) { check_store<swizzle::none>(64, 16); }
TEST_F(PackTma, TmaStore2DSwizzled128UnswizzlesIntoGlobal) { check_store<swizzle::b128>(128, 8); }
TEST_F(PackTma, TmaStore2DClipsOutOfBoundsPart) { check_store<swizzle::b128>(224, 48); }

// 3D: a [4][32][64] tensor; load the box z 1..2, y 8..15 (all x) and store it back elsewhere.
__global__ void tma_3d_kernel(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                              uint16_t* dump) {
  __shared__ uint8_t raw[4096 + 1024];
  __shared__ uint64_t bar;
  uint8_t* tile = align1024(raw);
  constexpr uint32_t bytes = 2 * 8 * 64 * 2;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, bytes);
    ptxkit::tma_load_3d(tile, &in, &bar, 0, 8, 1);
  }
  wait_or_trap(&bar, 0);
  for (uint32_t i = threadIdx.x; i < bytes / 2; i += blockDim.x) dump[i] = reinterpret_cast<uint16_t*>(tile)[i];
  ptxkit::fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::tma_store_3d(&out, tile, 0, 16, 2);
    ptxkit::bulk_commit_group();
    ptxkit::bulk_wait_group<0>();
  }
}

TEST_F(PackTma, TmaLoad3DAndStore3DMoveTheRightBox) {
  constexpr int d2 = 4, d1 = 32, d0 = 64;
  std::vector<uint16_t> host(d2 * d1 * d0);
  for (int i = 0; i < d2 * d1 * d0; ++i) host[i] = static_cast<uint16_t>(i);
  device_buffer<uint16_t> in(host.size()), out(host.size()), dump(2 * 8 * 64);
  PTXBENCH_CUDA_OK(in.upload(host));
  PTXBENCH_CUDA_OK(cudaMemset(out.ptr, 0, host.size() * 2));
  const CUtensorMap min = ptxkit::make_tma_3d_bf16(in.ptr, d2, d1, d0, d0, d1 * d0, 2, 8, 64, swizzle::none);
  const CUtensorMap mout = ptxkit::make_tma_3d_bf16(out.ptr, d2, d1, d0, d0, d1 * d0, 2, 8, 64, swizzle::none);
  tma_3d_kernel<<<1, 128>>>(min, mout, dump.ptr);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> tile, result;
  PTXBENCH_CUDA_OK(dump.download(tile));
  PTXBENCH_CUDA_OK(out.download(result));
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 64; ++x) {
        ASSERT_EQ(tile[(z * 8 + y) * 64 + x], ((1 + z) * d1 + 8 + y) * d0 + x) << z << "," << y << "," << x;
        ASSERT_EQ(result[((2 + z) * d1 + 16 + y) * d0 + x], ((1 + z) * d1 + 8 + y) * d0 + x);
      }
  EXPECT_EQ(result[0], 0);  // outside the stored box
}

// Reduce-add: two fp32 adds of the same smem box onto a global matrix of ones.
__global__ void tma_reduce_kernel(const __grid_constant__ CUtensorMap map) {
  __shared__ alignas(128) float tile[16 * 64];
  for (int i = threadIdx.x; i < 16 * 64; i += blockDim.x) tile[i] = static_cast<float>(i);
  ptxkit::fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::tma_reduce_add_2d(&map, tile, 0, 8);
    ptxkit::tma_reduce_add_2d(&map, tile, 0, 8);
    ptxkit::bulk_commit_group();
    ptxkit::bulk_wait_group<0>();
  }
}

TEST_F(PackTma, TmaReduceAddAccumulatesFp32) {
  std::vector<float> host(32 * 64, 1.0f);
  device_buffer<float> g(host.size());
  PTXBENCH_CUDA_OK(g.upload(host));
  const CUtensorMap map = ptxkit::make_tma_2d_f32(g.ptr, 32, 64, 64, 16, 64, swizzle::none);
  tma_reduce_kernel<<<1, 128>>>(map);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  PTXBENCH_CUDA_OK(g.download(host));
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 64; ++c) {
      const float want = r >= 8 && r < 24 ? 1.0f + 2.0f * ((r - 8) * 64 + c) : 1.0f;
      ASSERT_EQ(host[r * 64 + c], want) << r << "," << c;
    }
}

// Plain bulk copies: global -> smem (mbarrier), +1 in smem, smem -> global (bulk group).
__global__ void bulk_copy_kernel(const uint32_t* in, uint32_t* out, const __grid_constant__ CUtensorMap any_map) {
  __shared__ alignas(128) uint32_t buf[1024];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    ptxkit::mbar_init(&bar, 1);
    ptxkit::fence_mbarrier_init();
    ptxkit::bulk_prefetch_l2(in, sizeof(buf));
    ptxkit::tma_prefetch_2d(&any_map, 0, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::mbar_arrive_expect_tx(&bar, sizeof(buf));
    ptxkit::bulk_copy_g2s(buf, in, sizeof(buf), &bar);
  }
  wait_or_trap(&bar, 0);
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) buf[i] += 1;
  ptxkit::fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxkit::bulk_copy_s2g(out, buf, sizeof(buf));
    ptxkit::bulk_commit_group();
    ptxkit::bulk_wait_group_read<0>();  // smem may be reused from here
    ptxkit::bulk_wait_group<0>();       // global writes done
  }
}

TEST_F(PackTma, BulkCopyRoundTripsThroughSharedMemory) {
  std::vector<uint32_t> host(1024);
  for (uint32_t i = 0; i < 1024; ++i) host[i] = i * 3 + 7;
  device_buffer<uint32_t> in(1024), out(1024);
  device_buffer<uint16_t> g(kRows * kCols);
  PTXBENCH_CUDA_OK(in.upload(host));
  const CUtensorMap map = ptxkit::make_tma_2d_bf16(g.ptr, kRows, kCols, kCols, 32, 64, swizzle::none);
  bulk_copy_kernel<<<1, 128>>>(in.ptr, out.ptr, map);
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint32_t> got;
  PTXBENCH_CUDA_OK(out.download(got));
  for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(got[i], i * 3 + 8) << i;
}

TEST(PackTensorMap, RejectsABoxWiderThanTheSwizzleSpan) {
  const std::string reason = hopper_skip_reason();
  if (!reason.empty()) GTEST_SKIP() << reason;
  device_buffer<uint16_t> g(kRows * kCols);
  EXPECT_THROW(ptxkit::make_tma_2d_bf16(g.ptr, kRows, kCols, kCols, 32, 128, swizzle::b128), std::runtime_error);
  EXPECT_THROW(ptxkit::make_tma_2d_bf16(g.ptr + 1, kRows, kCols, kCols, 32, 64, swizzle::b128), std::runtime_error);
}

}  // namespace
}  // namespace ptxbench::gpu_test
