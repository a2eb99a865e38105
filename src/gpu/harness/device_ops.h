#pragma once
// Trusted device-side helpers of the harness: seeded input generation, the NaN poison and guard
// canary bytes, and the L2 flush. Host-callable functions; the kernels live in device_ops.cu. The
// checks of a call (canaries, input checksums, the output comparison) are device_checks.h.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "suite/dtype.h"

namespace ptxbench::gpu {

/// Fills n elements with standard-normal values (floats) or uniform integers in [-1024, 1024)
/// from a counter-based generator keyed by seed, so a trial can be replayed from its seed alone.
void fill_random(void* data, dtype type, int64_t n, uint64_t seed, cudaStream_t stream);

/// The poison written into outputs before every call: all bytes 0xFF, which is NaN for float32,
/// float16 and bfloat16, so an element the candidate never writes fails the comparison.
constexpr unsigned char k_nan_byte = 0xFF;
/// The canary in guard regions around every buffer the candidate may see.
constexpr unsigned char k_guard_byte = 0xA5;

/// Owns a buffer of at least twice the L2 size and overwrites it, evicting whatever the previous call
/// left in L2. Also clears persisting-L2 lines and the persisting carve-out of this context.
class l2_flusher {
 public:
  explicit l2_flusher(int device);
  ~l2_flusher();
  l2_flusher(const l2_flusher&) = delete;
  l2_flusher& operator=(const l2_flusher&) = delete;
  void flush(cudaStream_t stream);
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  void* m_buffer = nullptr;
  std::size_t m_bytes = 0;
  unsigned m_round = 0;
};

}  // namespace ptxbench::gpu
