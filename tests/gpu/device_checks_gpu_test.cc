// The harness's batched device checks (gpu/harness/device_checks.h) on a GPU: several checks of
// different kinds enqueued, collected with one synchronisation, each result read from its slot; a
// new batch starts from zeroed slots.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "gpu/harness/device_checks.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu {
namespace {

struct device_bytes {
  void* p = nullptr;
  explicit device_bytes(std::size_t n) { EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess); }
  ~device_bytes() { cudaFree(p); }
};

void put(void* base, std::size_t offset, const void* value, std::size_t n) {
  ASSERT_EQ(cudaMemcpy(static_cast<char*>(base) + offset, value, n, cudaMemcpyHostToDevice), cudaSuccess);
}

TEST(DeviceChecksGpu, ChecksOfEveryKindInOneBatchEachReadFromItsSlot) {
  PTXB_SKIP_WITHOUT_GPU();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  constexpr std::size_t k_bytes = 3u << 20;
  device_bytes guard(k_bytes), intact(k_bytes);
  ASSERT_EQ(cudaMemset(guard.p, 0xA5, k_bytes), cudaSuccess);
  ASSERT_EQ(cudaMemset(intact.p, 0xA5, k_bytes), cudaSuccess);
  unsigned char hit = 0x00;
  for (std::size_t at : {std::size_t{2000000}, std::size_t{100}, std::size_t{5000}}) put(guard.p, at, &hit, 1);

  constexpr int64_t n = 1 << 20;
  std::vector<__nv_bfloat16> ref(n, __float2bfloat16(1.0f)), out = ref;
  out[7] = __float2bfloat16(2.0f);
  out[9] = __float2bfloat16(std::numeric_limits<float>::quiet_NaN());
  device_bytes dref(n * 2), dout(n * 2);
  put(dref.p, 0, ref.data(), n * 2);
  put(dout.p, 0, out.data(), n * 2);

  device_checks checks(s, 8);
  checks.clear();
  auto damaged = checks.check_bytes(guard.p, k_bytes, 0xA5);
  auto clean = checks.check_bytes(intact.p, k_bytes, 0xA5);
  auto sum_ref = checks.checksum(dref.p, n * 2);
  auto sum_out = checks.checksum(dout.p, n * 2);
  auto sum_ref_again = checks.checksum(dref.p, n * 2);
  auto wrong = checks.compare(dout.p, dref.p, dtype::bfloat16, n, 1e-2, 1e-2, compare_rule::allclose);
  auto same = checks.compare(dref.p, dref.p, dtype::bfloat16, n, 1e-2, 1e-2, compare_rule::allclose);
  EXPECT_THROW((void)checks.byte_result(damaged), std::logic_error);  // not collected yet
  checks.collect();

  EXPECT_EQ(checks.byte_result(damaged).mismatches, 3u);
  EXPECT_EQ(checks.byte_result(damaged).first_offset, 100u);
  EXPECT_EQ(checks.byte_result(clean).mismatches, 0u);
  EXPECT_EQ(checks.checksum_result(sum_ref), checks.checksum_result(sum_ref_again));
  EXPECT_NE(checks.checksum_result(sum_ref), checks.checksum_result(sum_out));
  EXPECT_THROW((void)checks.checksum_result(wrong), std::logic_error);  // another kind of check

  auto w = checks.compare_result(wrong);
  EXPECT_EQ(w.mismatches, 2);
  EXPECT_EQ(w.nonfinite, 1);
  EXPECT_EQ(w.worst_index, 9);  // NaN/Inf first
  EXPECT_TRUE(std::isnan(w.worst_value));
  EXPECT_EQ(w.worst_expected, 1.0);
  EXPECT_TRUE(std::isinf(w.max_absolute_error));
  auto e = checks.compare_result(same);
  EXPECT_EQ(e.mismatches, 0);
  EXPECT_EQ(e.max_absolute_error, 0.0);
  EXPECT_EQ(e.worst_index, 0);

  // A new batch: zeroed slots, the first batch's results gone.
  checks.clear();
  auto again = checks.check_bytes(intact.p, k_bytes, 0xA5);
  auto only_wrong_at_7 = checks.compare(dout.p, dref.p, dtype::bfloat16, 8, 1e-2, 1e-2, compare_rule::allclose);
  checks.collect();
  EXPECT_EQ(checks.byte_result(again).mismatches, 0u);
  auto w7 = checks.compare_result(only_wrong_at_7);
  EXPECT_EQ(w7.mismatches, 1);
  EXPECT_EQ(w7.nonfinite, 0);
  EXPECT_EQ(w7.worst_index, 7);
  EXPECT_EQ(w7.worst_value, 2.0);
  EXPECT_NEAR(w7.max_absolute_error, 1.0, 1e-6);

  for (int i = 0; i < 6; ++i) (void)checks.checksum(dref.p, 16);  // 2 + 6: the capacity
  EXPECT_THROW((void)checks.checksum(dref.p, 16), std::logic_error);  // over the capacity
  cudaStreamDestroy(s);
}

}  // namespace
}  // namespace ptxbench::gpu
