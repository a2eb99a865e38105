#include "verdict/reported_speedup.h"

namespace ptxbench {

std::optional<double> reported_speedup(const verdict& v) {
  if (v.timing && v.timing->speedup > 0) return v.timing->speedup;
  if (v.flashinfer_trace && v.flashinfer_trace->eval && v.flashinfer_trace->eval->performance)
    return v.flashinfer_trace->eval->performance->speedup_factor;
  return std::nullopt;
}

}  // namespace ptxbench
