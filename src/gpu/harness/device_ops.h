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

/// Makes the device's default stream-ordered memory pool keep what is freed to it instead of giving
/// it back to the driver at the next synchronisation (its default release threshold is 0). Giving
/// memory back unmaps it, and on an H100 a cuBLASLt GEMM timed after that ran 0.2-0.4 % longer than
/// after an idle GPU (bench/eval/pacing_probe.sh): 6a2bd48's device checks allocated that way once per
/// check, between the candidate's call and the reference's, so its references were measured slow
/// (issue 26). Nothing of the harness's timed path allocates so now; this keeps a baseline or a future
/// check that does from reintroducing it. The runner's process is not touched: what a candidate's
/// own allocations cost is its own.
void keep_pool_memory(int device);

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
