#pragma once
// What a timed call's outputs must show. Correctness is judged by the task's trials (3, or 1 for
// backward tasks, as in the paper); the timed calls are checked too, but for a different question:
// were the results computed on this call, from this call's fresh inputs? A kernel that replays or
// caches results, or skips work, leaves poisoned (NaN) elements or gets most elements wrong; a
// correct kernel can still put an isolated element just outside atol + rtol·|ref| on some of the 60
// fresh inputs (the reference's own rounding is in that margin too). Failing those would make
// correctness depend on the number of timed calls, so they are counted and reported instead.
#include <cstdint>

namespace ptxbench::measure {

/// More than this fraction of an output's elements outside tolerance on a timed call means the
/// output was not computed from that call's inputs. Results from other inputs miss almost every
/// element, so the bound is far from both cases.
inline constexpr double k_timed_call_max_mismatch_fraction = 1e-3;

enum class timed_output_judgement {
  ok,            ///< every element within tolerance
  outliers,      ///< a few elements outside tolerance: recorded, not a failure
  not_computed,  ///< NaN/Inf or too many elements outside tolerance: INCORRECT_NUMERICAL
};

timed_output_judgement judge_timed_output(int64_t numel, int64_t mismatches, int64_t nonfinite);

}  // namespace ptxbench::measure
