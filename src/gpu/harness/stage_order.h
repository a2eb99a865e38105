#pragma once
// Stages that run at the same time are still judged one after another. The harness runs sanitize
// (compute-sanitizer, its own runner) beside the runner's start-up and correctness, and starts the
// dynamic check's runner under Nsight Compute speculatively once correctness has given what it
// needs; each of those writes into its own part, and the parts are merged into the result here, in
// the order the stages are judged: the first part that decided the verdict decides it, exactly as
// if the stages had run one after another, and nothing of the parts after it reaches the verdict
// (no stage record, decision, summary or sandbox report) — only their lease holds are kept, because
// the GPU was held (measurement.holds stays the truth about what used the GPU). A pure function, so
// the CPU tests check the order.

#include <vector>

#include "verdict/harness_protocol.h"

namespace ptxbench::gpu {

/// What one stage (or group of stages) established apart from the candidate's result.
struct stage_part {
  gpu_stage_result result;  ///< its stage records, lease holds, sandbox reports, correctness summary, decision
  bool go_on = true;        ///< false: it decided the verdict (result.decided)
};

/// Merges `parts` into `out` in order until one decided: that one's records, summary, sandbox
/// reports and decision are merged and the evaluation ends there; every later part contributes its
/// lease holds only. Returns true when no part decided (the evaluation goes on).
bool judge_in_order(gpu_stage_result& out, std::vector<stage_part> parts);

}  // namespace ptxbench::gpu
