#pragma once
// GPU spans from CUPTI activity records: every kernel, memcpy and memset this process put on the
// GPU, on any stream, between two CUPTI timestamps. Used by the harness (reference calls) and by
// the candidate runner (candidate calls). CUPTI's buffer callbacks are process-wide C callbacks, so
// there is at most one tracer per process.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/result.h"

namespace ptxbench::gpu {

/// One activity record: a kernel, a copy or a memset, with the correlation id of the API call that
/// put it on the GPU (the launch audit matches launches to records by it).
struct activity_record {
  uint64_t start = 0, end = 0;  ///< CUPTI clock; both 0 when CUPTI could not time it
  uint32_t correlation_id = 0;
  std::string name;             ///< kernel name; empty for copies and memsets
};

struct gpu_span {
  uint64_t start_ns = 0, end_ns = 0;  ///< first start, last end (CUPTI clock)
  int records = 0;                    ///< kernels + copies + memsets in the window
  std::vector<std::string> kernels;   ///< kernel names, in start order
  uint64_t busy_ns = 0;               ///< the union of the records' intervals: the span less its idle gaps
  [[nodiscard]] double ms() const { return records ? (end_ns - start_ns) * 1e-6 : 0.0; }
};

class activity_tracer {
 public:
  /// Enables CONCURRENT_KERNEL, MEMCPY and MEMSET activity records for this process. Fails (with
  /// CUPTI's message) when CUPTI is unavailable; callers then fall back to CUDA events.
  static result<std::unique_ptr<activity_tracer>> start();
  ~activity_tracer();
  activity_tracer(const activity_tracer&) = delete;
  activity_tracer& operator=(const activity_tracer&) = delete;

  /// The CUPTI timestamp now (same clock as the records).
  uint64_t now() const;
  /// Flushes CUPTI's buffers and returns the span of the records that started at or after t0 and
  /// ended at or before t1; older records are discarded.
  gpu_span collect(uint64_t t0, uint64_t t1);
  /// Flushes CUPTI's buffers and hands over every record that arrived since the last drain/collect.
  std::vector<activity_record> drain();
  /// The span of the records that started at or after t0 and ended at or before t1, and of those
  /// whose correlation id is in `call_ids` (the launches the call's callbacks saw) wherever their
  /// timestamps lie: CUPTI puts GPU timestamps on the CPU clock, and a record of the call that the
  /// conversion places a few µs outside [t0, t1] is still the call's work (left out, it shortened
  /// the span and the call's kernel count differed from its neighbours').
  static gpu_span span_of(const std::vector<activity_record>& records, uint64_t t0, uint64_t t1,
                          const std::unordered_set<uint32_t>& call_ids = {});

 private:
  activity_tracer() = default;
};

}  // namespace ptxbench::gpu
