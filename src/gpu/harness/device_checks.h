#pragma once
// The harness's device-side checks of a call — guard canaries, input checksums, the output
// comparison — enqueued on one stream and read back together: one copy into pinned memory and one
// synchronisation per batch. Done one at a time, each check allocated its result, copied it back
// into pageable memory and synchronised on its own: the checks after a timed call took 1.2 ms and
// the comparison 1.0 ms (medians) of the GEMM task's 6.6 ms pair on an H100, whose kernels run
// 1.6 ms (bench/results/h100/session8-870f055/speed-p3, pair_phase_median_ms).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "suite/dtype.h"

namespace ptxbench::gpu {

/// How many bytes of a range differ from the expected byte, and the first that does.
struct byte_check {
  uint64_t mismatches = 0;
  uint64_t first_offset = 0;
};

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

/// One batch at a time: clear(), enqueue checks (each returns its slot), collect() (waits for the
/// stream), then read the results by slot. The slots live in device memory allocated once, so
/// enqueuing allocates nothing and nothing waits until collect().
class device_checks {
 public:
  struct slot;  // one check's result on the device (device_checks.cu)

  /// `capacity`: the most checks one batch may hold; enqueuing more is a programming error (throws).
  device_checks(cudaStream_t stream, std::size_t capacity);
  ~device_checks();
  device_checks(const device_checks&) = delete;
  device_checks& operator=(const device_checks&) = delete;

  /// Starts a new batch: every slot zeroed on the stream.
  void clear();
  /// Counts the bytes of [data, data+bytes) that differ from `expected`.
  std::size_t check_bytes(const void* data, std::size_t bytes, unsigned char expected);
  /// An order-independent 64-bit checksum of a buffer (for "inputs unchanged").
  std::size_t checksum(const void* data, std::size_t bytes);
  /// Compares n elements of out against ref (both of `type`), and fetches the worst element's pair.
  std::size_t compare(const void* out, const void* ref, dtype type, int64_t n, double atol, double rtol,
                      compare_rule rule);
  /// Copies every slot of this batch back and waits for the stream.
  void collect();

  [[nodiscard]] byte_check byte_result(std::size_t slot) const;
  [[nodiscard]] uint64_t checksum_result(std::size_t slot) const;
  [[nodiscard]] compare_stats compare_result(std::size_t slot) const;

 private:
  std::size_t take(int kind);
  [[nodiscard]] const slot& collected(std::size_t index, int kind) const;

  cudaStream_t m_stream;
  std::size_t m_capacity;
  slot* m_device = nullptr;
  slot* m_host = nullptr;  // pinned
  std::vector<int> m_kinds;  // what each slot of this batch holds
  bool m_collected = false;
};

}  // namespace ptxbench::gpu
