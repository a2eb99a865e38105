#pragma once
// The arithmetic of the timing stage, kept apart from the GPU so it is unit-tested on recorded
// numbers: robust summaries, the trusted wall-clock bound on the candidate's self-reported span,
// and the speedup as the median of per-pair ratios (reference and candidate calls alternate, so
// clock and power drift hit both members of a pair alike).

#include <optional>
#include <vector>

#include "verdict/verdict.h"

namespace ptxbench::eval {

/// Linear-interpolated quantile (q in [0,1]) of an unsorted sample; 0 for an empty one.
double quantile(std::vector<double> values, double q);

/// Median, p10, p90, mean and coefficient of variation (stddev / mean) of a sample.
latency_stats summarize(const std::vector<double>& values_ms);

/// One timed (reference, candidate) pair.
struct timed_pair {
  double reference_ms = 0;     ///< GPU span of the reference call (trusted harness)
  double candidate_span_ms = 0;  ///< GPU span the runner reported (untrusted), 0 when unavailable
  double candidate_wall_ms = 0;  ///< harness clock from "go" to "done" (trusted)
};

struct wallclock_calibration {
  double overhead_ms = 0;   ///< median round trip of a call that does nothing
  double allowance_ms = 0;  ///< how far wall − overhead may exceed the span before we distrust it
};

/// Calibrates the wall-clock bound from no-op round trips: overhead = median; allowance =
/// max(0.1 ms, 3 × (p90 − median)) — launch overhead and scheduling jitter.
wallclock_calibration calibrate(const std::vector<double>& noop_wall_ms);

struct candidate_timing {
  std::vector<double> used_ms;  ///< the latency used per pair
  std::vector<double> ratios;   ///< reference / used, per pair
  int disagreements = 0;        ///< pairs where the wall-clock bound exceeded the span
};

/// Per pair: the candidate's latency is its span, unless the trusted bound (wall − overhead)
/// exceeds it by more than the allowance (work the span did not see: host work, other processes,
/// a forged span); then the larger is used. Without a span, the bound is used.
candidate_timing decide_candidate_latency(const std::vector<timed_pair>& pairs, const wallclock_calibration& cal);

/// A timed call that finished faster than physics allows (eval/physical_floor.h).
struct floor_violation {
  int pair = -1;           ///< index into the timed pairs
  double span_ms = 0;      ///< the GPU span the runner reported (0: none)
  double bound_ms = 0;     ///< the trusted wall-clock bound, wall − overhead
  bool from_span = false;  ///< true: the reported span is below the floor; false: the wall-clock bound is
};

/// The first timed pair below the floor, or nullopt. A reported span below the floor fails even
/// when the wall-clock bound is above it: the span then hides work (a decoy kernel, records turned
/// off), and no honest span can be shorter than the floor. The wall-clock bound, coarse by the
/// calibration's allowance, fails only when even bound + allowance is below the floor (and only
/// where no span was reported). floor_ms <= 0 disables the check.
std::optional<floor_violation> find_below_floor(const std::vector<timed_pair>& pairs, const wallclock_calibration& cal,
                                                double floor_ms);

}  // namespace ptxbench::eval
