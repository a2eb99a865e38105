#pragma once
// How a tuned cuDNN plan is remembered per host (core/tuned_choice.h) and found again: the fields
// that identify it (its index in find_plans' list, the heuristic mode, the engine id and the label
// without the plan's JSON, which is long and holds code), the GPU part of the key, and the lookup a
// later build makes. Shared by the SDPA and GQA baselines, whose graphs differ but whose plans are
// remembered the same way.

#include <string>

#include "baselines/cudnn_plan.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::gpu::cudnn {

/// {"heuristic", "index", "engine", "label"} for `plan`, the index-th of find_plans' list.
ordered_json remembered_plan_identity(const plan_candidate& plan, int index);

/// The plan a remembered choice (holding remembered_plan_identity's fields) names in `op_graph`:
/// find_plans' list up to its index, the plan there if it is still the same engine, heuristic mode
/// and label. An error says what changed (the caller then tunes again); `graph_name` is for it.
/// `max_plans`: how many plans tuning tries per graph (a larger index is out of range).
result<plan_candidate> find_remembered_plan(const descriptor& op_graph, const ordered_json& choice,
                                            const std::string& graph_name, int max_plans);

/// "<GPU name>-sm<major><minor>" for `device` ("unknown-gpu-sm00" when CUDA cannot say): GPUs of
/// one model share a remembered choice, the GPU index is not part of it.
std::string remembered_plan_device(int device);

}  // namespace ptxbench::gpu::cudnn
