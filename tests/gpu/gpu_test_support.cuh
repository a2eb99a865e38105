// Helpers shared by the GPU tests of the knowledge-pack wrappers: device checks that skip
// visibly, RAII device buffers, a host model of the TMA swizzle, and a bounded mbarrier wait that
// turns a hang into a test failure instead of a stuck process.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <ptxkit/mbarrier.cuh>

namespace ptxbench::gpu_test {

/// Empty when a Hopper GPU is usable; otherwise the reason to skip.
inline std::string hopper_skip_reason() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return "no CUDA GPU (cudaGetDeviceCount reports none)";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "cannot query device 0";
  if (p.major != 9) return "needs an sm_90 GPU for the sm_90a wrappers (device 0 is sm_" +
                           std::to_string(p.major * 10 + p.minor) + ")";
  return "";
}

/// Base fixture: skips without a Hopper GPU, and resets the device after a test that left a sticky
/// error (a trap), so one broken kernel does not fail every later test in the same process.
class hopper_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = hopper_skip_reason();
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
  void TearDown() override {
    if (hopper_skip_reason().empty() && cudaDeviceSynchronize() != cudaSuccess) cudaDeviceReset();
  }
};

#define PTXBENCH_CUDA_OK(call)                                                                     \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorName(e_) << " " << cudaGetErrorString(e_); \
  } while (0)

/// A device allocation freed on scope exit.
template <typename T>
struct device_buffer {
  T* ptr = nullptr;
  size_t count = 0;
  explicit device_buffer(size_t n) : count(n) {
    if (cudaMalloc(&ptr, n * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  ~device_buffer() { if (ptr) cudaFree(ptr); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  cudaError_t upload(const std::vector<T>& v) { return cudaMemcpy(ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice); }
  cudaError_t download(std::vector<T>& v) const {
    v.resize(count);
    return cudaMemcpy(v.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost);
  }
};

/// Host model of the swizzle (same formula the pack documents): 16-byte chunk bits [4, 4+b) of a
/// byte offset inside a 1024-byte-aligned tile are XORed with bits [7, 7+b).
inline uint32_t host_swizzle(uint32_t offset, uint32_t span_bytes) {
  const uint32_t mask = span_bytes == 0 ? 0 : span_bytes / 16 - 1;
  return offset ^ (((offset >> 7) & mask) << 4);
}

inline uint16_t bf16_bits(float f) {
  __nv_bfloat16 b = __float2bfloat16_rn(f);
  uint16_t u;
  std::memcpy(&u, &b, 2);
  return u;
}

inline float bf16_value(uint16_t u) {
  const uint32_t bits = static_cast<uint32_t>(u) << 16;  // bf16 is the top half of an fp32
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Deterministic small integers in [-range, range] (exact in bf16 and in fp32 sums).
inline std::vector<uint16_t> small_int_matrix(size_t n, int range, uint32_t seed) {
  std::vector<uint16_t> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = bf16_bits(static_cast<float>(static_cast<int>((s >> 16) % (2 * range + 1)) - range));
  }
  return v;
}

/// Rounds a pointer up to a 1024-byte boundary (what 128B swizzle and wgmma descriptors assume).
__device__ __forceinline__ uint8_t* align1024(void* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + 1023) & ~uintptr_t(1023));
}

/// Any thread. mbar_wait with a deadline (about 2 s of GPU time): traps instead of hanging, so a
/// wrong byte count or parity fails the test with "unspecified launch failure".
__device__ __forceinline__ void wait_or_trap(uint64_t* bar, uint32_t parity) {
  const long long start = clock64();
  while (!ptxkit::mbar_try_wait(bar, parity)) {
    if (clock64() - start > 4000000000LL) __trap();
  }
}

}  // namespace ptxbench::gpu_test
