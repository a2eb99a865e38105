// keep_pool_memory (gpu/harness/device_ops.h) on a GPU: the default stream-ordered pool's release
// threshold goes from the driver's 0 to "keep everything", and memory freed to the pool is still
// reserved by it after a synchronisation (with the default it would have been given back).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "gpu/harness/device_ops.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu {
namespace {

TEST(PoolMemoryGpu, FreedMemoryStaysReservedAcrossASynchronisation) {
  PTXB_SKIP_WITHOUT_GPU();
  cudaMemPool_t pool;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  keep_pool_memory(0);
  uint64_t threshold = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  EXPECT_EQ(threshold, UINT64_MAX);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMallocAsync(&p, 8u << 20, s), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(p, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  uint64_t reserved = 0;
  ASSERT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), cudaSuccess);
  EXPECT_GE(reserved, uint64_t{8} << 20) << "the pool gave its memory back at the synchronisation";
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace ptxbench::gpu
