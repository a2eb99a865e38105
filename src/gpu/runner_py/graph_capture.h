#pragma once
// Stream capture of one run() call in the Triton capture process (gpu/harness/triton_plan.h says
// what becomes of it): begin a relaxed capture on the call's stream, and at its end describe every
// node of the captured graph — kernel nodes with their function, grid, block, shared memory, cluster
// dimensions and the exact bytes of each parameter, memset nodes with their range — in dependency
// order, as JSON. Nothing in the graph executes. The description is data for the trusted side,
// which believes none of it without checking.

#include <cstdint>
#include <string>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::gpu {

/// Starts capturing `stream` (a cudaStream_t as an integer), relaxed mode: allocations stay legal.
status begin_stream_capture(uint64_t stream);

/// Ends the capture and describes the graph ({"nodes": [...]}), then destroys it. An error says why
/// the capture broke (a synchronisation inside it, another stream not joined back, ...).
result<ordered_json> end_stream_capture(uint64_t stream);

}  // namespace ptxbench::gpu
