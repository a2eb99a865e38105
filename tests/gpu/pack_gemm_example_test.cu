// Runs the pack-based GEMM candidate (examples/gemm/wgmma_tma_pack.cu) through its exported ABI
// entry point on a small problem whose M, N and K are not multiples of the tile sizes, so the
// TMA zero fill, the clipped TMA store and the pipeline wrap-around are all exercised.
#include "../../examples/gemm/wgmma_tma_pack.cu"

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {
namespace {

class PackGemmExample : public hopper_test {};

ptxbench_tensor make_arg(void* data, int64_t rows, int64_t cols, int is_output) {
  ptxbench_tensor t{};
  t.data = data;
  t.dtype = PTXBENCH_BFLOAT16;
  t.ndim = 2;
  t.sizes[0] = rows;
  t.sizes[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.is_output = is_output;
  return t;
}

TEST_F(PackGemmExample, MatchesHostReferenceOnRaggedShape) {
  constexpr int M = 320, N = 640, K = 448;  // 2.5 M tiles, 2.5 N tiles, 7 K tiles over 4 stages
  const auto a = small_int_matrix(M * K, 2, 11), b = small_int_matrix(N * K, 2, 12);
  device_buffer<uint16_t> da(a.size()), db(b.size()), dc(M * N);
  PTXBENCH_CUDA_OK(da.upload(a));
  PTXBENCH_CUDA_OK(db.upload(b));
  PTXBENCH_CUDA_OK(cudaMemset(dc.ptr, 0xff, M * N * 2));
  const ptxbench_tensor args[3] = {make_arg(da.ptr, M, K, 0), make_arg(db.ptr, N, K, 0), make_arg(dc.ptr, M, N, 1)};
  const char* err = nullptr;
  ASSERT_EQ(ptxbench_entry_run(args, 3, nullptr, &err), PTXBENCH_OK) << err;
  PTXBENCH_CUDA_OK(cudaDeviceSynchronize());
  std::vector<uint16_t> got;
  PTXBENCH_CUDA_OK(dc.download(got));
  std::vector<float> af(a.size()), bf(b.size());
  for (size_t i = 0; i < a.size(); ++i) af[i] = bf16_value(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bf[i] = bf16_value(b[i]);
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0;
      for (int k = 0; k < K; ++k) s += af[i * K + k] * bf[j * K + k];
      if (got[i * N + j] != bf16_bits(s) && bad++ < 5)
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << bf16_value(got[i * N + j]) << ", want " << s;
    }
  EXPECT_EQ(bad, 0);
}

TEST_F(PackGemmExample, RejectsMismatchedShapesWithAMessage) {
  device_buffer<uint16_t> d(64 * 64);
  const ptxbench_tensor args[3] = {make_arg(d.ptr, 64, 64, 0), make_arg(d.ptr, 64, 32, 0), make_arg(d.ptr, 64, 64, 1)};
  const char* err = nullptr;
  EXPECT_EQ(ptxbench_entry_run(args, 3, nullptr, &err), PTXBENCH_ERROR_SHAPE);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("shape mismatch"), std::string::npos) << err;
}

}  // namespace
}  // namespace ptxbench::gpu_test
