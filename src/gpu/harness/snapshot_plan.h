#pragma once
// The order in which the harness copies a timed call's outputs when the runner says "done"
// (docs/trusted-timing.md, "Why the snapshot"). Each output is cut into chunks and the chunks of all
// outputs are copied in an order drawn afresh for every call, so the candidate cannot know which part
// of its output is read first: a "done" forged before its last writes then reads unfinished data
// in some chunk on almost every call, instead of winning the copy's whole duration.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptxbench::gpu {

struct snapshot_chunk {
  std::size_t output = 0;  ///< index of the output
  std::size_t offset = 0;  ///< bytes from the output's start
  std::size_t bytes = 0;
};

/// Every byte of every output exactly once, in chunks of at most ceil(size / chunks_per_output)
/// bytes rounded up to 256 (whole cache lines and aligned copies), shuffled by `seed`.
std::vector<snapshot_chunk> snapshot_plan(const std::vector<std::size_t>& output_bytes, int chunks_per_output,
                                          uint64_t seed);

}  // namespace ptxbench::gpu
