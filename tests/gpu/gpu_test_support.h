#pragma once
// Helpers for the GPU attention tests: device buffers, host copies, bf16 decoding and an allclose
// that reports the worst element.

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ptxbench::gpu::testing {

/// True when a CUDA device is usable; otherwise tests call GTEST_SKIP with the reason.
inline bool have_gpu(std::string& why) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    why = std::string("no CUDA device: ") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return false;
  }
  return true;
}

#define PTXB_SKIP_WITHOUT_GPU()                                  \
  do {                                                           \
    std::string why_no_gpu;                                      \
    if (!::ptxbench::gpu::testing::have_gpu(why_no_gpu)) GTEST_SKIP() << why_no_gpu; \
  } while (0)

/// A cudaMalloc'd buffer of `count` T (freed on destruction).
template <typename T>
class device_array {
 public:
  explicit device_array(int64_t count) : m_count(count) {
    EXPECT_EQ(cudaMalloc(&m_ptr, static_cast<std::size_t>(count) * sizeof(T)), cudaSuccess);
  }
  ~device_array() { cudaFree(m_ptr); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  [[nodiscard]] T* get() const { return m_ptr; }
  [[nodiscard]] int64_t count() const { return m_count; }
  [[nodiscard]] std::vector<T> to_host() const {
    std::vector<T> out(static_cast<std::size_t>(m_count));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(out.data(), m_ptr, out.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  T* m_ptr = nullptr;
  int64_t m_count = 0;
};

inline float bf16_to_float(__nv_bfloat16 x) {
  uint16_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float out = 0.0F;
  std::memcpy(&out, &wide, sizeof out);
  return out;
}

inline std::vector<float> to_float(const std::vector<__nv_bfloat16>& in) {
  std::vector<float> out;
  out.reserve(in.size());
  for (__nv_bfloat16 x : in) out.push_back(bf16_to_float(x));
  return out;
}

/// allclose(got, want): |got - want| <= atol + rtol * |want| everywhere; the failure names the worst.
inline ::testing::AssertionResult all_close(const std::vector<float>& got, const std::vector<float>& want,
                                            double atol, double rtol) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  std::size_t bad = 0, worst = 0;
  double worst_excess = -1.0, max_abs = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(static_cast<double>(got[i]) - want[i]);
    const double excess = diff - (atol + rtol * std::abs(static_cast<double>(want[i])));
    max_abs = std::max(max_abs, diff);
    if (!(excess <= 0.0)) ++bad;  // NaN counts as a mismatch
    if (!(excess <= worst_excess)) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess() << "max abs error " << max_abs;
  return ::testing::AssertionFailure() << bad << " of " << got.size() << " elements outside atol=" << atol
                                       << " rtol=" << rtol << "; worst at " << worst << ": got " << got[worst]
                                       << ", want " << want[worst] << " (max abs error " << max_abs << ")";
}

}  // namespace ptxbench::gpu::testing
