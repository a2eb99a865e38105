#include "measure/physical_floor.h"

#include <algorithm>

#include <fmt/format.h>

namespace ptxbench::measure {

std::optional<physical_floor> physical_floor_for(const floor_inputs& in, double l2_bytes) {
  const auto& p = in.peaks;
  if (!(p.bf16_dense_flops_per_s > 0) || !(p.memory_bytes_per_s > 0)) return std::nullopt;
  physical_floor f;
  f.dram_bytes = in.work.bytes_read + std::max(0.0, in.work.bytes_written - std::max(0.0, l2_bytes));
  f.compute_ms = in.work.flops / p.bf16_dense_flops_per_s * 1e3;
  f.memory_ms = f.dram_bytes / p.memory_bytes_per_s * 1e3;
  f.floor_ms = std::max(f.compute_ms, f.memory_ms);
  f.basis = fmt::format("max({:.4g} FLOP / {:g} TFLOP/s = {:.4f} ms, {:.4g} B / {:g} TB/s = {:.4f} ms) on {}",
                        in.work.flops, p.bf16_dense_flops_per_s / 1e12, f.compute_ms, f.dram_bytes,
                        p.memory_bytes_per_s / 1e12, f.memory_ms, in.target);
  return f;
}

std::string floor_violation_message(const floor_violation& v, const physical_floor& f, double allowance_ms, int call,
                                    uint64_t seed) {
  std::string what = v.from_span
                         ? fmt::format("reported a GPU span of {:.4f} ms (the harness's own clock saw up to {:.4f} ms: "
                                       "work was hidden from the measurement)",
                                       v.span_ms, v.bound_ms + allowance_ms)
                         : fmt::format("took at most {:.4f} ms by the harness's own clock", v.bound_ms + allowance_ms);
  return fmt::format("faster than physically possible: timed call {} (seed {}) {}, below the physical floor of {:.4f} ms "
                     "= {}",
                     call, seed, what, f.floor_ms, f.basis);
}

}  // namespace ptxbench::measure
