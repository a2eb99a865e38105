// Runs the issue-30 reference GEMM (examples/reference/gemm_persistent.cu: persistent, 2-CTA clusters
// with the B tile multicast) through its exported ABI entry point and checks it against a host
// reference on sampled elements: first a ragged shape (an odd number of M tiles, so the last
// cluster's second CTA is entirely out of bounds; partial N and K tiles; more cluster tiles than
// clusters, so every CTA runs several tiles and the ring wraps across tiles and rasterisation
// groups), then the task's shape twice (the second call takes the cached launch configuration).
// Its own executable (ptxbench_gpu_reference_tests): the candidate defines `run` and its exports,
// as examples/gemm/wgmma_tma_pack.cu does in ptxbench_gpu_pack_tests.
// With PTXBENCH_REFERENCE_GEMM_STREAM_K (ptxbench_gpu_reference_stream_k_tests) the same tests run the
// Stream-K variant examples/reference/variants/v8_stream_k.cu: the ragged shape then has 67 Stream-K
// tiles of 6 k steps over 66 clusters (55 split tiles), and both shapes are called twice, so a flag
// its owner failed to reset would corrupt the second call.
#ifdef PTXBENCH_REFERENCE_GEMM_STREAM_K
#include "../../examples/reference/variants/v8_stream_k.cu"
#else
#include "../../examples/reference/gemm_persistent.cu"
#endif

#include <cstdio>

#include "reference_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class ReferenceGemm : public hopper_test {};

// Calls the kernel on M x N x K small-integer inputs (the fp32 sums are exact, so the bf16 result
// must match the host's rounding bit for bit) and compares the sampled elements.
void check_gemm(int M, int N, int K, int calls, int sample_mod) {
  const auto a = small_int_matrix(static_cast<size_t>(M) * K, 2, 21), b = small_int_matrix(static_cast<size_t>(N) * K, 2, 22);
  device_buffer<uint16_t> da(a.size()), db(b.size()), dc(static_cast<size_t>(M) * N);
  ASSERT_TRUE(da.ptr && db.ptr && dc.ptr);
  PTXBENCH_CUDA_OK(da.upload(a));
  PTXBENCH_CUDA_OK(db.upload(b));
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = bf16_value(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bf[i] = bf16_value(b[i]);
  for (int call = 0; call < calls; ++call) {
    PTXBENCH_CUDA_OK(cudaMemset(dc.ptr, 0xff, dc.count * 2));  // NaN, like the harness's outputs
    const ptxbench_tensor args[3] = {contiguous_arg(da.ptr, PTXBENCH_BFLOAT16, {M, K}, 0),
                                     contiguous_arg(db.ptr, PTXBENCH_BFLOAT16, {N, K}, 0),
                                     contiguous_arg(dc.ptr, PTXBENCH_BFLOAT16, {M, N}, 1)};
    const char* err = nullptr;
    ASSERT_EQ(ptxbench_entry_run(args, 3, nullptr, &err), PTXBENCH_OK) << err;
    wait_or_die("ReferenceGemm", "the reference GEMM");
    PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint16_t> got;
    PTXBENCH_CUDA_OK(dc.download(got));
    int bad = 0;
    int64_t checked = 0;
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        // Every row, column and tile is sampled, at every residue of the in-tile position.
        if ((static_cast<int64_t>(i) * 7 + static_cast<int64_t>(j) * 3) % sample_mod != 0 && i != M - 1 && j != N - 1)
          continue;
        float s = 0;
        const float* ar = &af[static_cast<size_t>(i) * K];
        const float* br = &bf[static_cast<size_t>(j) * K];
        for (int k = 0; k < K; ++k) s += ar[k] * br[k];
        ++checked;
        if (got[static_cast<size_t>(i) * N + j] != bf16_bits(s) && bad++ < 8)
          ADD_FAILURE() << "call " << call << ": C[" << i << "][" << j << "] = "
                        << bf16_value(got[static_cast<size_t>(i) * N + j]) << ", want " << s;
      }
    EXPECT_EQ(bad, 0) << "of " << checked << " sampled elements (" << M << "x" << N << "x" << K << ", call " << call << ")";
  }
}

TEST_F(ReferenceGemm, MatchesHostReferenceOnRaggedShapeWithSeveralTilesPerCta) {
  // 37 M tiles (19 cluster rows: the last one half out of bounds, 3 groups of 8), 7 N tiles (the
  // last 184 wide), 6 K tiles (the last 8 deep): 133 cluster tiles over at most 66 clusters.
#ifdef PTXBENCH_REFERENCE_GEMM_STREAM_K
  check_gemm(128 * 37 - 50, 256 * 7 - 72, 64 * 5 + 8, 2, 5);
#else
  check_gemm(128 * 37 - 50, 256 * 7 - 72, 64 * 5 + 8, 1, 5);
#endif
}

TEST_F(ReferenceGemm, MatchesHostReferenceOnTheTaskShape) {
  check_gemm(8192, 7168, 5120, 2, 2003);
}

}  // namespace
}  // namespace ptxbench::gpu_test
