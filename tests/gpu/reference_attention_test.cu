// Runs an issue-30 reference attention forward (examples/reference/mha_fwd.cu, or mha_fwd_causal.cu
// when PTXBENCH_REFERENCE_ATTN_CAUSAL is defined) through its exported ABI entry point and checks O and
// LSE against a host fp64 reference with the task's tolerance (allclose, atol = rtol = 0.01):
//  - small shapes checked on every row: one tile per CTA (B=1, H=2, S=256), and B=2, H=3, S=640 (a
//    partial head group of the scheduler, 5 query tiles, odd KV counts);
//  - more tiles than SMs (B=2, H=8, S=2048: 256 tiles, so CTAs run several tiles, the K/V ring and the
//    Q buffer wrap across tiles and the dynamic scheduler hands out tiles), sampled rows, called twice
//    (the scheduler's counter must be reset by every call);
//  - the task's shape (B=4, H=48, S=4096), sampled rows of a few heads.
// Two executables (ptxbench_gpu_reference_attention_tests and ..._causal_tests) built from this file:
// a candidate defines `run` and its exports, so each binary includes exactly one.
#if defined(PTXBENCH_REFERENCE_ATTN_CAUSAL)
#include "../../examples/reference/mha_fwd_causal.cu"
#define PTXBENCH_ATTN_SUITE ReferenceAttentionCausal
constexpr bool kTestCausal = true;
#else
#include "../../examples/reference/mha_fwd.cu"
#define PTXBENCH_ATTN_SUITE ReferenceAttention
constexpr bool kTestCausal = false;
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "reference_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class PTXBENCH_ATTN_SUITE : public hopper_test {};

// Host fp64 reference for one query row (bh, i): O row (128 values) and natural-log LSE.
void host_row(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int S, int bh,
              int i, double* o, double* lse) {
  constexpr int D = 128;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  const size_t head = static_cast<size_t>(bh) * S * D;
  const int keys = kTestCausal ? i + 1 : S;
  std::vector<double> logit(keys);
  double mx = -INFINITY;
  for (int j = 0; j < keys; ++j) {
    double dot = 0;
    for (int d = 0; d < D; ++d) dot += static_cast<double>(q[head + static_cast<size_t>(i) * D + d]) * k[head + static_cast<size_t>(j) * D + d];
    logit[j] = dot * scale;
    mx = std::max(mx, logit[j]);
  }
  double sum = 0;
  for (int j = 0; j < keys; ++j) sum += std::exp(logit[j] - mx);
  for (int d = 0; d < D; ++d) o[d] = 0;
  for (int j = 0; j < keys; ++j) {
    const double p = std::exp(logit[j] - mx) / sum;
    for (int d = 0; d < D; ++d) o[d] += p * v[head + static_cast<size_t>(j) * D + d];
  }
  *lse = mx + std::log(sum);
}

bool close(double got, double want) { return std::fabs(got - want) <= 0.01 + 0.01 * std::fabs(want); }

// Runs the kernel `calls` times on [B, H, S, 128] inputs and checks the rows that `sampled(bh, i)` picks.
template <typename Sampler>
void check_attention(int B, int H, int S, int calls, Sampler sampled) {
  constexpr int D = 128;
  const size_t n = static_cast<size_t>(B) * H * S * D, rows = static_cast<size_t>(B) * H * S;
  const auto q = random_bf16(n, 31), k = random_bf16(n, 32), v = random_bf16(n, 33);
  device_buffer<uint16_t> dq(n), dk(n), dv(n), dout(n);
  device_buffer<float> dlse(rows);
  ASSERT_TRUE(dq.ptr && dk.ptr && dv.ptr && dout.ptr && dlse.ptr);
  PTXBENCH_CUDA_OK(dq.upload(q));
  PTXBENCH_CUDA_OK(dk.upload(k));
  PTXBENCH_CUDA_OK(dv.upload(v));
  std::vector<float> qf(n), kf(n), vf(n);
  for (size_t i = 0; i < n; ++i) {
    qf[i] = bf16_value(q[i]);
    kf[i] = bf16_value(k[i]);
    vf[i] = bf16_value(v[i]);
  }
  for (int call = 0; call < calls; ++call) {
    PTXBENCH_CUDA_OK(cudaMemset(dout.ptr, 0xff, n * 2));  // NaN, like the harness's outputs
    PTXBENCH_CUDA_OK(cudaMemset(dlse.ptr, 0xff, rows * 4));
    const ptxbench_tensor args[5] = {
        contiguous_arg(dq.ptr, PTXBENCH_BFLOAT16, {B, H, S, D}, 0), contiguous_arg(dk.ptr, PTXBENCH_BFLOAT16, {B, H, S, D}, 0),
        contiguous_arg(dv.ptr, PTXBENCH_BFLOAT16, {B, H, S, D}, 0), contiguous_arg(dout.ptr, PTXBENCH_BFLOAT16, {B, H, S, D}, 1),
        contiguous_arg(dlse.ptr, PTXBENCH_FLOAT32, {B, H, S}, 1)};
    const char* err = nullptr;
    ASSERT_EQ(ptxbench_entry_run(args, 5, nullptr, &err), PTXBENCH_OK) << err;
    wait_or_die("ReferenceAttention", "the reference attention forward");
    PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> got;
    std::vector<float> got_lse;
    PTXBENCH_CUDA_OK(dout.download(got));
    PTXBENCH_CUDA_OK(dlse.download(got_lse));
    int bad = 0;
    int64_t checked = 0;
    double worst = 0;
    double o[D], lse = 0;
    for (int bh = 0; bh < B * H; ++bh)
      for (int i = 0; i < S; ++i) {
        if (!sampled(bh, i)) continue;
        host_row(qf, kf, vf, S, bh, i, o, &lse);
        ++checked;
        const size_t row = static_cast<size_t>(bh) * S + i;
        const double gl = got_lse[row];
        if (!close(gl, lse) && bad++ < 8)
          ADD_FAILURE() << "call " << call << ": LSE[bh " << bh << "][" << i << "] = " << gl << ", want " << lse;
        worst = std::max(worst, std::fabs(gl - lse));
        for (int d = 0; d < D; ++d) {
          const double g = bf16_value(got[row * D + d]);
          worst = std::max(worst, std::isnan(g) ? INFINITY : std::fabs(g - o[d]));
          if (!close(g, o[d]) && bad++ < 8)
            ADD_FAILURE() << "call " << call << ": O[bh " << bh << "][" << i << "][" << d << "] = " << g << ", want "
                          << o[d];
        }
      }
    EXPECT_EQ(bad, 0) << "of " << checked << " sampled rows (B=" << B << " H=" << H << " S=" << S << ", call " << call
                      << ")";
    std::printf("B=%d H=%d S=%d causal=%d call %d: %lld rows checked, max abs error %.3g\n", B, H, S,
                kTestCausal ? 1 : 0, call, static_cast<long long>(checked), worst);
  }
}

TEST_F(PTXBENCH_ATTN_SUITE, EveryRowOfOneTilePerCta) {
  check_attention(1, 2, 256, 1, [](int, int) { return true; });
}

TEST_F(PTXBENCH_ATTN_SUITE, EveryRowWithAPartialHeadGroup) {
  check_attention(2, 3, 640, 1, [](int, int) { return true; });
}

TEST_F(PTXBENCH_ATTN_SUITE, SampledRowsWithMoreTilesThanSmsCalledTwice) {
  // Every head; in each 128-row tile its first and last rows, the rows at the warpgroup boundary
  // (63, 64) and a few more.
  check_attention(2, 8, 2048, 2, [](int bh, int i) {
    const int r = i % 128;
    return r == 0 || r == 63 || r == 64 || r == 127 || (i * 7 + bh * 13) % 97 == 0;
  });
}

TEST_F(PTXBENCH_ATTN_SUITE, SampledRowsOfTheTaskShape) {
  // 6 heads spread over the batch, rows spread over every query tile.
  check_attention(4, 48, 4096, 1, [](int bh, int i) {
    if (bh != 0 && bh != 47 && bh != 48 && bh != 100 && bh != 150 && bh != 191) return false;
    return i % 128 == 0 || i % 128 == 127 || (i * 5 + bh) % 251 == 0;
  });
}

}  // namespace
}  // namespace ptxbench::gpu_test
