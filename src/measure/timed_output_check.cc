#include "measure/timed_output_check.h"

namespace ptxbench::measure {

timed_output_judgement judge_timed_output(int64_t numel, int64_t mismatches, int64_t nonfinite) {
  if (nonfinite > 0) return timed_output_judgement::not_computed;
  if (mismatches == 0) return timed_output_judgement::ok;
  if (numel <= 0 || static_cast<double>(mismatches) > k_timed_call_max_mismatch_fraction * static_cast<double>(numel))
    return timed_output_judgement::not_computed;
  return timed_output_judgement::outliers;
}

}  // namespace ptxbench::measure
