#pragma once
// The physical floor: no GPU finishes a task faster than its FLOPs at the target's peak tensor rate,
// nor faster than the bytes that must cross DRAM at the peak bandwidth. A timed call below it did
// not do the task in the time it reports (work hidden from the measurement, or a forged span), so
// the timing stage fails it — RUNTIME_ERROR "faster than physically possible" — whatever CUPTI saw
// (the check itself is find_below_floor in eval/timing_stats.h; docs/gpu-evaluation.md says why
// RUNTIME_ERROR).
//
// Bytes that must cross DRAM during a call: every input byte (the harness writes twice the L2
// before each call, so inputs start cold) plus the output bytes that do not fit in L2 (a write-back
// L2 may hold up to its size of output past the kernel's end). Both peaks are upper bounds
// (suite/targets.json), so an honest kernel is never below the floor.

#include <cstdint>
#include <optional>
#include <string>

#include "measure/timing_stats.h"
#include "verdict/harness_protocol.h"
#include "verdict/verdict.h"

namespace ptxbench::measure {

// The inputs (floor_inputs, with their JSON) are part of the harness job
// (verdict/harness_protocol.h); the result (physical_floor) is part of the timing summary
// (verdict/verdict.h).

/// The floor for a task on a device whose L2 holds `l2_bytes` (the device's real size: a smaller
/// value raises the floor). Returns nullopt when the target has no peaks or they are not positive.
std::optional<physical_floor> physical_floor_for(const floor_inputs& in, double l2_bytes);

/// The timing stage's one-line failure message for a call below the floor, e.g. "faster than
/// physically possible: timed call 12 (seed 1012) reported a GPU span of 0.0200 ms, below the
/// physical floor of 0.5617 ms = max(...)". `call` and `seed` identify the call for a replay.
std::string floor_violation_message(const floor_violation& v, const physical_floor& f, double allowance_ms, int call,
                                    uint64_t seed);

}  // namespace ptxbench::measure
