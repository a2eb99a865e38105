// The GPU fp32 attention reference against the double-precision CPU reference on tiny shapes: the
// yardstick the cuDNN baseline tests rely on must itself compute the defined function.

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "baselines/attention_cpu_reference.h"
#include "baselines/attention_reference.h"
#include "baselines/seeded_fill.h"
#include "gpu_test_support.h"

namespace ptxbench::gpu {
namespace {

using testing::all_close;
using testing::device_array;
using testing::to_float;

class GpuReferenceVsCpu : public ::testing::TestWithParam<std::tuple<int64_t, bool>> {};

TEST_P(GpuReferenceVsCpu, ForwardAndBackwardAgree) {
  PTXB_SKIP_WITHOUT_GPU();
  const auto [d, causal] = GetParam();
  const int64_t heads = 3, s = 40, n = heads * s * d;
  const attention_dims dims{heads, s, d, causal, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
  device_array<__nv_bfloat16> q(n), k(n), v(n), d_o(n), o_bf16(n);
  device_array<float> o(n), lse(heads * s), dq(n), dk(n), dv(n);
  ASSERT_TRUE(fill_normal_bf16(q.get(), n, 1, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(k.get(), n, 2, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(v.get(), n, 3, nullptr).ok());
  ASSERT_TRUE(fill_normal_bf16(d_o.get(), n, 4, nullptr).ok());

  ASSERT_TRUE(reference_attention_forward(q.get(), k.get(), v.get(), dims, o.get(), lse.get(), nullptr).ok());
  ASSERT_TRUE(convert_f32_to_bf16(o.get(), o_bf16.get(), n, nullptr).ok());
  ASSERT_TRUE(reference_attention_backward(q.get(), k.get(), v.get(), o_bf16.get(), d_o.get(), lse.get(), dims,
                                           dq.get(), dk.get(), dv.get(), nullptr)
                  .ok());

  const baselines::attention_shape shape{heads, s, d, causal, dims.scale};
  const std::vector<float> hq = to_float(q.to_host()), hk = to_float(k.to_host()), hv = to_float(v.to_host());
  auto fwd = baselines::attention_forward_cpu(hq, hk, hv, shape);
  ASSERT_TRUE(fwd.ok());
  EXPECT_TRUE(all_close(o.to_host(), fwd->o, 1e-5, 1e-4)) << "O";
  EXPECT_TRUE(all_close(lse.to_host(), fwd->lse, 1e-5, 1e-5)) << "LSE";

  // The backward on both sides starts from the same bf16 O and fp32 L, as a backward task does.
  const std::vector<float> gpu_lse = lse.to_host();
  auto bwd = baselines::attention_backward_cpu(hq, hk, hv, to_float(o_bf16.to_host()), to_float(d_o.to_host()), gpu_lse,
                                          shape);
  ASSERT_TRUE(bwd.ok()) << bwd.err().message;
  EXPECT_TRUE(all_close(dq.to_host(), bwd->dq, 1e-5, 1e-4)) << "dQ";
  EXPECT_TRUE(all_close(dk.to_host(), bwd->dk, 1e-5, 1e-4)) << "dK";
  EXPECT_TRUE(all_close(dv.to_host(), bwd->dv, 1e-5, 1e-4)) << "dV";
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuReferenceVsCpu,
                         ::testing::Combine(::testing::Values(int64_t{16}, int64_t{64}), ::testing::Bool()));

TEST(GpuReference, RejectsHeadDimensionAbove256) {
  attention_dims dims{1, 8, 512, false, 1.0F};
  status s = reference_attention_forward(nullptr, nullptr, nullptr, dims, nullptr, nullptr, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.err().message.find("D <= 256"), std::string::npos) << s.err().message;
}

}  // namespace
}  // namespace ptxbench::gpu
