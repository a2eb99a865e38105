#pragma once
// Execution plans for a finalized cuDNN operation graph: engine configs from the heuristics, plans
// that finalize, variant packs and timing. Used by the SDPA baselines to autotune once per problem.

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "baselines/cudnn_backend.h"

namespace ptxbench::gpu::cudnn {

/// A finalized execution plan and what identifies it.
struct plan_candidate {
  descriptor plan;
  int64_t engine_id = -1;        ///< CUDNN_ATTR_ENGINE_GLOBAL_INDEX (-1 when cuDNN would not say)
  int64_t workspace_bytes = 0;
  bool runtime_compiled = false; ///< the engine carries CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION
  std::string heuristic;         ///< "A" or "FALLBACK"
  std::string json;              ///< CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION (may be empty)

  /// "engine 8 rtc (heuristics A, workspace 0 B, plan {...})"; without the plan's JSON when
  /// with_plan_json is false (what a remembered choice compares: the JSON is long and holds code).
  [[nodiscard]] std::string label(bool with_plan_json = true) const;
};

struct plan_search {
  std::vector<plan_candidate> plans;  ///< in heuristic order
  std::vector<std::string> rejected;  ///< why each other config or mode gave no plan
};

/// The engine configs the heuristics rank for `mode` (possibly none); throws cudnn_error when the
/// heuristics descriptor cannot be built. `device_properties`: see find_plans.
std::vector<descriptor> engine_configs(const descriptor& op_graph, cudnnBackendHeurMode_t mode,
                                      const descriptor* device_properties = nullptr);

/// Tries to finalize an execution plan for `config` into `out` (engine id, notes, workspace, JSON);
/// returns cuDNN's status (a failure is an answer here, not an error).
cudnnStatus_t finalize_plan(const descriptor& config, const char* heuristic, plan_candidate& out);

/// Asks the heuristics for engine configs (mode A; FALLBACK only when A yields no plan) and
/// finalizes up to `max_plans` of them. Never throws for a config cuDNN rejects (it is listed in
/// `rejected`); throws cudnn_error only when the heuristics descriptor itself cannot be built.
/// `device_properties` (a DEVICEPROP descriptor, cuDNN >= 9.8) targets a GPU other than the
/// current one, e.g. an H200 from a machine without a GPU.
plan_search find_plans(const descriptor& op_graph, int max_plans, const descriptor* device_properties = nullptr);

/// A finalized DEVICEPROP descriptor from cuDNN's JSON form of a GPU's properties (the form
/// device_properties_json returns); throws cudnn_error when cuDNN rejects the JSON (it names the
/// missing key) or predates 9.8.
descriptor device_properties_from_json(const std::string& json);

/// cuDNN's JSON form of the properties of `device` (for device-less plan checks elsewhere); throws
/// cudnn_error on failure.
std::string device_properties_json(cudnnHandle_t handle, int device);

/// A VARIANT_PACK binding `uids[i]` to `pointers[i]`, plus the workspace; throws cudnn_error.
descriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace);

/// Enqueues one execution on the handle's stream; throws cudnn_error with cuDNN's text on failure.
void execute(cudnnHandle_t handle, const descriptor& plan, const descriptor& variant_pack);

/// Median over `iterations` timed executions (after one untimed), each bracketed by CUDA events on
/// `stream` [milliseconds]. Throws cudnn_error / std::runtime_error when an execution fails.
float median_execution_ms(cudnnHandle_t handle, const descriptor& plan, const descriptor& variant_pack,
                          cudaStream_t stream, int iterations);

}  // namespace ptxbench::gpu::cudnn
