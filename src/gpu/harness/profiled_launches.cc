#include "gpu/harness/profiled_launches.h"

#include <fmt/format.h>

namespace ptxbench::gpu {

std::string profiled_launch_mismatch(int per_call, std::size_t profiled_kernels, int timed_per_call) {
  if (per_call <= 0) return "";
  if (static_cast<int>(profiled_kernels) != per_call)
    return fmt::format("the profiled call launched {} kernel(s), each correctness call {}: the candidate's calls do "
                       "not do the same work",
                       profiled_kernels, per_call);
  if (timed_per_call == per_call) return "";
  if (timed_per_call > 0)
    return fmt::format("each timed call launched {} kernel(s), each profiled and correctness call {}: the candidate's "
                       "calls do not do the same work",
                       timed_per_call, per_call);
  return fmt::format("the timed calls launched varying numbers of kernels, each profiled and correctness call {}: the "
                     "candidate's calls do not do the same work",
                     per_call);
}

}  // namespace ptxbench::gpu
