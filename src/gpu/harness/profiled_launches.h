#pragma once
// Whether the dynamic check's profiled call can stand for the candidate's calls: Nsight Compute
// counts the launches of one call in its own runner, chosen as one correctness call's worth; the
// count means something about the timed work only if that call, the correctness calls and the
// timed calls all launched the same number of kernels. A pure function, so the CPU tests check it.

#include <cstddef>
#include <string>

namespace ptxbench::gpu {

/// "" when the profiled call stands for the others; else why not, in one line (the dynamic check
/// then ends in profile_error). per_call: the kernels each correctness call launched, -1 when they
/// varied (then every launch of the profiled calls was counted and nothing is compared);
/// profiled_kernels: what the report holds; timed_per_call: each timed call's, -1 when they varied.
std::string profiled_launch_mismatch(int per_call, std::size_t profiled_kernels, int timed_per_call);

}  // namespace ptxbench::gpu
