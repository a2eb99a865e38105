// Helpers of the GPU tests that call an issue-30 reference kernel (examples/reference/*.cu) through
// its exported ABI entry: contiguous tensor arguments, a stream wait that turns a pipeline hang into a
// failure, and deterministic bf16 inputs. Include after the candidate (it brings <ptxbench/abi.h>).
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <thread>
#include <vector>

#include <ptxbench/abi.h>

#include "gpu_test_support.cuh"

namespace ptxbench::gpu_test {

/// A contiguous (row-major) tensor argument of the given sizes.
inline ptxbench_tensor contiguous_arg(void* data, int dtype, std::initializer_list<int64_t> sizes, int is_output) {
  ptxbench_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.ndim = static_cast<int32_t>(sizes.size());
  int i = 0;
  for (int64_t s : sizes) t.sizes[i++] = s;
  int64_t stride = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    t.strides[d] = stride;
    stride *= t.sizes[d];
  }
  t.is_output = is_output;
  return t;
}

/// Waits for the default stream. A hang (a barrier phase or tx count that never completes) fails the
/// binary with "<suite>: <what> did not finish within 20 s" instead of blocking until ctest's timeout;
/// any other error is left to the caller's synchronize to report.
inline void wait_or_die(const char* suite, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  while (cudaStreamQuery(nullptr) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) {
      std::fprintf(stderr, "%s: %s did not finish within 20 s (a pipeline hang)\n", suite, what);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// Deterministic values of roughly unit variance (sum of 4 uniforms in [-0.5, 0.5), scaled), as bf16.
inline std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    float acc = 0.f;
    for (int k = 0; k < 4; ++k) {
      s = s * 1664525u + 1013904223u;
      acc += static_cast<float>(s >> 8) / 16777216.f - 0.5f;
    }
    x = bf16_bits(acc * 1.7320508f);
  }
  return v;
}

}  // namespace ptxbench::gpu_test
