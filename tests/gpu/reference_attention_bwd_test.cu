// Runs an issue-30 reference attention backward (examples/reference/mha_bwd.cu, or mha_bwd_causal.cu
// when PTXBENCH_REFERENCE_ATTN_CAUSAL is defined) through its exported ABI entry point and checks dQ, dK
// and dV against a host fp64 reference of the task's formula with the task's tolerance (allclose,
// atol = rtol = 0.01). O and L are the forward's (host fp64, O rounded to bf16) for every checked head:
//  - small shapes checked on every row: B=1, H=2, S=256 (2 KV tiles, 4 query tiles) and B=2, H=3,
//    S=640 (5 KV tiles, 10 query tiles: the ring wraps, the non-causal query order wraps around);
//  - more CTAs than SMs (B=2, H=8, S=2048: 256 CTAs), sampled rows of three heads, called twice (the
//    fp32 dQ accumulator in the kernel's scratch must be cleared by every call);
//  - the task's shape (B=4, H=48, S=4096), sampled rows of three heads (the other heads get random O
//    and a constant L: their results are not checked).
// Two executables (ptxbench_gpu_reference_attention_bwd_tests and ..._bwd_causal_tests) built from this
// file: a candidate defines `run` and its exports, so each binary includes exactly one.
#if defined(PTXBENCH_REFERENCE_ATTN_CAUSAL)
#include "../../examples/reference/mha_bwd_causal.cu"
#define PTXBENCH_ATTN_BWD_SUITE ReferenceAttentionBwdCausal
constexpr bool kTestCausal = true;
#else
#include "../../examples/reference/mha_bwd.cu"
#define PTXBENCH_ATTN_BWD_SUITE ReferenceAttentionBwd
constexpr bool kTestCausal = false;
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

#include "reference_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class PTXBENCH_ATTN_BWD_SUITE : public hopper_test {};

constexpr int kHd = 128;

// Runs f(0..n-1) on all host cores.
void parallel_for(int n, const std::function<void(int)>& f) {
  const int workers = std::max(1, std::min<int>(n, static_cast<int>(std::thread::hardware_concurrency())));
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) f(i);
    });
  for (auto& t : pool) t.join();
}

bool visible(int i, int j) { return !kTestCausal || j <= i; }

double dot(const float* a, const float* b) {
  double s = 0;
  for (int d = 0; d < kHd; ++d) s += static_cast<double>(a[d]) * b[d];
  return s;
}

// The inputs as floats (bf16 values) and the per-row statistics of the checked heads.
struct problem {
  int B, H, S;
  std::vector<float> q, k, v, o, dout, lse;  // lse: the L input (fp32 values)
  std::vector<double> dsum;                  // rowsum(dO * O) of the checked heads
  double scale = 1.0 / std::sqrt(static_cast<double>(kHd));
  const float* row(const std::vector<float>& t, int bh, int i) const { return t.data() + (static_cast<size_t>(bh) * S + i) * kHd; }
  double p(int bh, int i, int j) const {
    if (!visible(i, j)) return 0;
    return std::exp(dot(row(q, bh, i), row(k, bh, j)) * scale - lse[static_cast<size_t>(bh) * S + i]);
  }
  // dQ row i of head bh (scaled).
  void dq_row(int bh, int i, double* out) const {
    for (int d = 0; d < kHd; ++d) out[d] = 0;
    const double ds_i = dsum[static_cast<size_t>(bh) * S + i];
    for (int j = 0; j < S; ++j) {
      const double pij = p(bh, i, j);
      if (pij == 0) continue;
      const double ds = pij * (dot(row(dout, bh, i), row(v, bh, j)) - ds_i);
      const float* kj = row(k, bh, j);
      for (int d = 0; d < kHd; ++d) out[d] += ds * kj[d];
    }
    for (int d = 0; d < kHd; ++d) out[d] *= scale;
  }
  // dK and dV row j of head bh.
  void dkdv_row(int bh, int j, double* dk, double* dv) const {
    for (int d = 0; d < kHd; ++d) dk[d] = dv[d] = 0;
    for (int i = 0; i < S; ++i) {
      const double pij = p(bh, i, j);
      if (pij == 0) continue;
      const double ds = pij * (dot(row(dout, bh, i), row(v, bh, j)) - dsum[static_cast<size_t>(bh) * S + i]);
      const float *qi = row(q, bh, i), *gi = row(dout, bh, i);
      for (int d = 0; d < kHd; ++d) {
        dv[d] += pij * gi[d];
        dk[d] += ds * qi[d];
      }
    }
    for (int d = 0; d < kHd; ++d) dk[d] *= scale;
  }
};

bool close(double got, double want) { return std::fabs(got - want) <= 0.01 + 0.01 * std::fabs(want); }

// Builds a problem: random Q, K, V, dO; O and L from the host forward for `checked` heads, random O and
// a constant L elsewhere. Returns the bf16 bit patterns of Q, K, V, O, dO and the L values.
void make_problem(problem& pb, const std::vector<int>& checked, std::vector<uint16_t> (&bits)[5]) {
  const size_t n = static_cast<size_t>(pb.B) * pb.H * pb.S * kHd, rows = static_cast<size_t>(pb.B) * pb.H * pb.S;
  bits[0] = random_bf16(n, 41);
  bits[1] = random_bf16(n, 42);
  bits[2] = random_bf16(n, 43);
  bits[3] = random_bf16(n, 44);  // O of the unchecked heads
  bits[4] = random_bf16(n, 45);  // dO
  auto to_float = [&](const std::vector<uint16_t>& b, std::vector<float>& f) {
    f.resize(b.size());
    for (size_t i = 0; i < b.size(); ++i) f[i] = bf16_value(b[i]);
  };
  to_float(bits[0], pb.q);
  to_float(bits[1], pb.k);
  to_float(bits[2], pb.v);
  to_float(bits[4], pb.dout);
  pb.lse.assign(rows, static_cast<float>(std::log(static_cast<double>(pb.S)) + 0.5));
  pb.dsum.assign(rows, 0.0);
  const int S = pb.S;
  for (int bh : checked) {
    parallel_for(S, [&](int i) {  // the forward: L and O (rounded to bf16) of row i
      std::vector<double> logit(S);
      double mx = -INFINITY;
      for (int j = 0; j < S; ++j)
        if (visible(i, j)) {
          logit[j] = dot(pb.row(pb.q, bh, i), pb.row(pb.k, bh, j)) * pb.scale;
          mx = std::max(mx, logit[j]);
        }
      double sum = 0, o[kHd] = {};
      for (int j = 0; j < S; ++j)
        if (visible(i, j)) {
          const double e = std::exp(logit[j] - mx);
          sum += e;
          const float* vj = pb.row(pb.v, bh, j);
          for (int d = 0; d < kHd; ++d) o[d] += e * vj[d];
        }
      const size_t r = static_cast<size_t>(bh) * S + i;
      pb.lse[r] = static_cast<float>(mx + std::log(sum));
      for (int d = 0; d < kHd; ++d) bits[3][r * kHd + d] = bf16_bits(static_cast<float>(o[d] / sum));
    });
  }
  to_float(bits[3], pb.o);
  for (int bh : checked)
    for (int i = 0; i < S; ++i) pb.dsum[static_cast<size_t>(bh) * S + i] = dot(pb.row(pb.dout, bh, i), pb.row(pb.o, bh, i));
}

// Runs the kernel `calls` times and checks, for each checked head, the dQ rows and dK/dV rows that
// `sampled(i)` picks.
void check_backward(int B, int H, int S, int calls, const std::vector<int>& checked, const std::function<bool(int)>& sampled) {
  problem pb{B, H, S, {}, {}, {}, {}, {}, {}, {}};
  std::vector<uint16_t> bits[5];
  make_problem(pb, checked, bits);
  const size_t n = static_cast<size_t>(B) * H * S * kHd, rows = static_cast<size_t>(B) * H * S;
  device_buffer<uint16_t> dq_in(n), dk_in(n), dv_in(n), do_in(n), ddo_in(n), g_dq(n), g_dk(n), g_dv(n);
  device_buffer<float> dl(rows);
  ASSERT_TRUE(dq_in.ptr && dk_in.ptr && dv_in.ptr && do_in.ptr && ddo_in.ptr && g_dq.ptr && g_dk.ptr && g_dv.ptr && dl.ptr);
  PTXBENCH_CUDA_OK(dq_in.upload(bits[0]));
  PTXBENCH_CUDA_OK(dk_in.upload(bits[1]));
  PTXBENCH_CUDA_OK(dv_in.upload(bits[2]));
  PTXBENCH_CUDA_OK(do_in.upload(bits[3]));
  PTXBENCH_CUDA_OK(ddo_in.upload(bits[4]));
  PTXBENCH_CUDA_OK(dl.upload(pb.lse));

  // The host reference of the checked rows (computed once, compared after every call).
  struct want_row {
    int bh, i;
    std::vector<double> dq, dk, dv;
  };
  std::vector<want_row> want;
  for (int bh : checked)
    for (int i = 0; i < S; ++i)
      if (sampled(i)) want.push_back({bh, i, std::vector<double>(kHd), std::vector<double>(kHd), std::vector<double>(kHd)});
  parallel_for(static_cast<int>(want.size()), [&](int w) {
    pb.dq_row(want[w].bh, want[w].i, want[w].dq.data());
    pb.dkdv_row(want[w].bh, want[w].i, want[w].dk.data(), want[w].dv.data());
  });

  for (int call = 0; call < calls; ++call) {
    for (auto* g : {&g_dq, &g_dk, &g_dv}) PTXBENCH_CUDA_OK(cudaMemset(g->ptr, 0xff, n * 2));  // NaN, like the harness
    const ptxbench_tensor args[9] = {
        contiguous_arg(dq_in.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 0), contiguous_arg(dk_in.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 0),
        contiguous_arg(dv_in.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 0), contiguous_arg(do_in.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 0),
        contiguous_arg(ddo_in.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 0), contiguous_arg(dl.ptr, PTXBENCH_FLOAT32, {B, H, S}, 0),
        contiguous_arg(g_dq.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 1), contiguous_arg(g_dk.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 1),
        contiguous_arg(g_dv.ptr, PTXBENCH_BFLOAT16, {B, H, S, kHd}, 1)};
    const char* err = nullptr;
    ASSERT_EQ(ptxbench_entry_run(args, 9, nullptr, &err), PTXBENCH_OK) << err;
    wait_or_die("ReferenceAttentionBwd", "the reference attention backward");
    PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> got[3];
    PTXBENCH_CUDA_OK(g_dq.download(got[0]));
    PTXBENCH_CUDA_OK(g_dk.download(got[1]));
    PTXBENCH_CUDA_OK(g_dv.download(got[2]));
    const char* names[3] = {"dQ", "dK", "dV"};
    int bad = 0;
    double worst[3] = {0, 0, 0};
    for (const auto& w : want) {
      const std::vector<double>* ref[3] = {&w.dq, &w.dk, &w.dv};
      const size_t r = static_cast<size_t>(w.bh) * S + w.i;
      for (int t = 0; t < 3; ++t)
        for (int d = 0; d < kHd; ++d) {
          const double g = bf16_value(got[t][r * kHd + d]), x = (*ref[t])[d];
          worst[t] = std::max(worst[t], std::isnan(g) ? INFINITY : std::fabs(g - x));
          if (!close(g, x) && bad++ < 12)
            ADD_FAILURE() << "call " << call << ": " << names[t] << "[bh " << w.bh << "][" << w.i << "][" << d << "] = " << g
                          << ", want " << x;
        }
    }
    EXPECT_EQ(bad, 0) << "of " << want.size() << " checked rows x 3 tensors (B=" << B << " H=" << H << " S=" << S
                      << ", call " << call << ")";
    std::printf("B=%d H=%d S=%d causal=%d call %d: %zu rows checked, max abs error dQ %.3g dK %.3g dV %.3g\n", B, H, S,
                kTestCausal ? 1 : 0, call, want.size(), worst[0], worst[1], worst[2]);
  }
}

std::vector<int> all_heads(int bh) {
  std::vector<int> v(bh);
  for (int i = 0; i < bh; ++i) v[i] = i;
  return v;
}

TEST_F(PTXBENCH_ATTN_BWD_SUITE, EveryRowTwoKvTiles) {
  check_backward(1, 2, 256, 1, all_heads(2), [](int) { return true; });
}

TEST_F(PTXBENCH_ATTN_BWD_SUITE, EveryRowFiveKvTiles) {
  check_backward(2, 3, 640, 1, all_heads(6), [](int) { return true; });
}

// Rows at the tile edges (0, 63, 64, 127 of each 128) and a spread of others.
bool edge_or_spread(int i) {
  const int r = i % 128;
  return r == 0 || r == 63 || r == 64 || r == 127 || (i * 7) % 61 == 0;
}

TEST_F(PTXBENCH_ATTN_BWD_SUITE, SampledRowsWithMoreCtasThanSmsCalledTwice) {
  check_backward(2, 8, 2048, 2, {0, 7, 15}, edge_or_spread);
}

TEST_F(PTXBENCH_ATTN_BWD_SUITE, SampledRowsOfTheTaskShape) {
  check_backward(4, 48, 4096, 1, {0, 101, 191}, [](int i) {
    const int r = i % 128;
    return r == 0 || r == 127 || (i * 5) % 251 == 0;
  });
}

}  // namespace
}  // namespace ptxbench::gpu_test
