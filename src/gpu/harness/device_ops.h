#pragma once
// Trusted device-side helpers of the harness: seeded input generation, NaN poisoning, guard canaries,
// input checksums, the output comparison and the L2 flush. Host-callable functions; the kernels
// live in device_ops.cu.

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

/// Counts bytes in [data, data+bytes) that differ from `expected`; also returns the first offset.
struct byte_check {
  uint64_t mismatches = 0;
  uint64_t first_offset = 0;
};
byte_check check_bytes(const void* data, std::size_t bytes, unsigned char expected, cudaStream_t stream);

/// An order-independent 64-bit checksum of a buffer (for "inputs unchanged" checks).
uint64_t checksum(const void* data, std::size_t bytes, cudaStream_t stream);

enum class compare_rule {
  allclose,      ///< |out − ref| <= atol + rtol·|ref| (torch.allclose); any NaN/Inf in out fails
  upstream_and,  ///< upstream PTXBench: fails only if |out − ref| > atol AND |out − ref|/(|ref|+1e-8) > rtol
};

struct compare_stats {
  double max_absolute_error = 0;  ///< +inf when an output element is NaN/Inf
  double max_relative_error = 0;  ///< |out − ref| / (|ref| + 1e-8)
  int64_t mismatches = 0;
  int64_t nonfinite = 0;
  int64_t worst_index = -1;       ///< flat index of the element most out of tolerance (|d| / tol; NaN/Inf first)
  double worst_value = 0, worst_expected = 0;
};

/// Compares n elements of out against ref (both of `type`) on the device.
compare_stats compare(const void* out, const void* ref, dtype type, int64_t n, double atol, double rtol,
                      compare_rule rule, cudaStream_t stream);

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
