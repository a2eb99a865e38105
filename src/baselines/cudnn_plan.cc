#include "baselines/cudnn_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

namespace ptxbench::gpu::cudnn {
namespace {

struct heuristic_mode {
  cudnnBackendHeurMode_t mode;
  const char* name;
};

// Engine index and whether it compiles at run time; best effort (-1 / false when cuDNN won't say).
void describe_engine(const descriptor& config, plan_candidate& out) {
  descriptor engine = descriptor::create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "ENGINE");
  cudnnBackendDescriptor_t raw = engine.get();
  int64_t n = 0;
  if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                               &raw) != CUDNN_STATUS_SUCCESS) {
    return;
  }
  cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &out.engine_id);
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> notes{};
  int64_t note_count = 0;
  if (cudnnBackendGetAttribute(raw, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               static_cast<int64_t>(notes.size()), &note_count, notes.data()) == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0; i < std::min<int64_t>(note_count, notes.size()); ++i) {
      if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) out.runtime_compiled = true;
    }
  }
}

std::string plan_json(const descriptor& plan) {
  int64_t size = 0;
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0, &size,
                               nullptr) != CUDNN_STATUS_SUCCESS ||
      size <= 0) {
    return {};
  }
  std::string json(static_cast<std::size_t>(size), '\0');
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, size,
                               &size, json.data()) != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  json.resize(std::min<std::size_t>(json.size(), std::char_traits<char>::length(json.c_str())));
  return json;
}

}  // namespace

std::vector<descriptor> engine_configs(const descriptor& op_graph, cudnnBackendHeurMode_t mode,
                                      const descriptor* device_properties) {
  descriptor heur = descriptor::create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "ENGINEHEUR");
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, op_graph, "ENGINEHEUR_OPERATION_GRAPH");
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "ENGINEHEUR_MODE");
  if (device_properties != nullptr) {
#if CUDNN_VERSION >= 90800
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, *device_properties, "ENGINEHEUR_DEVICEPROP");
#else
    throw cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, "device properties need cuDNN >= 9.8 headers");
#endif
  }
  heur.finalize("engine heuristics");
  int64_t count = 0;
  PTXB_CUDNN_CALL(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(descriptor::create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "ENGINECFG"));
    raw.push_back(configs.back().get());
  }
  int64_t returned = 0;
  if (count > 0) {
    PTXB_CUDNN_CALL(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()));
  }
  configs.resize(static_cast<std::size_t>(std::clamp<int64_t>(returned, 0, count)));
  return configs;
}

cudnnStatus_t finalize_plan(const descriptor& config, const char* heuristic, plan_candidate& out) {
  out.heuristic = heuristic;
  describe_engine(config, out);
  out.plan = descriptor::create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "EXECUTION_PLAN");
  out.plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config, "EXECUTION_PLAN_ENGINE_CONFIG");
  cudnnStatus_t status = out.plan.try_finalize();
  if (status != CUDNN_STATUS_SUCCESS) return status;
  int64_t n = 0;
  cudnnBackendGetAttribute(out.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                           &out.workspace_bytes);
  out.json = plan_json(out.plan);
  return status;
}

std::string plan_candidate::label(bool with_plan_json) const {
  const bool plan = with_plan_json && !json.empty();
  return fmt::format("engine {}{} (heuristics {}, workspace {} B{}{})", engine_id, runtime_compiled ? " rtc" : "",
                     heuristic, workspace_bytes, plan ? ", plan " : "", plan ? json : "");
}

plan_search find_plans(const descriptor& op_graph, int max_plans, const descriptor* device_properties) {
  plan_search search;
  std::set<std::string> seen_json;
  for (heuristic_mode mode : {heuristic_mode{CUDNN_HEUR_MODE_A, "A"}, heuristic_mode{CUDNN_HEUR_MODE_FALLBACK,
                                                                                      "FALLBACK"}}) {
    if (!search.plans.empty()) break;
    std::vector<descriptor> configs;
    try {
      configs = engine_configs(op_graph, mode.mode, device_properties);
    } catch (const cudnn_error& e) {
      search.rejected.push_back(fmt::format("heuristics {}: {}", mode.name, e.what()));
      continue;
    }
    if (configs.empty()) search.rejected.push_back(fmt::format("heuristics {}: no engine configs", mode.name));
    for (std::size_t i = 0; i < configs.size() && static_cast<int>(search.plans.size()) < max_plans; ++i) {
      plan_candidate c;
      if (cudnnStatus_t status = finalize_plan(configs[i], mode.name, c); status != CUDNN_STATUS_SUCCESS) {
        search.rejected.push_back(fmt::format("heuristics {} config {} (engine {}): {}", mode.name, i, c.engine_id,
                                              status_text(status)));
        continue;
      }
      if (!c.json.empty() && !seen_json.insert(c.json).second) continue;  // same plan listed twice
      search.plans.push_back(std::move(c));
    }
  }
  return search;
}

#if CUDNN_VERSION >= 90800
descriptor device_properties_from_json(const std::string& json) {
  descriptor props = descriptor::create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, "DEVICEPROP");
  props.set(CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, static_cast<int64_t>(json.size()),
            json.data(), "DEVICEPROP_JSON_REPRESENTATION");
  props.finalize("device properties from JSON");
  return props;
}

std::string device_properties_json(cudnnHandle_t handle, int device) {
  descriptor props = descriptor::create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, "DEVICEPROP");
  props.set(CUDNN_ATTR_DEVICEPROP_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "DEVICEPROP_HANDLE");
  props.set(CUDNN_ATTR_DEVICEPROP_DEVICE_ID, CUDNN_TYPE_INT32, 1, &device, "DEVICEPROP_DEVICE_ID");
  props.finalize("device properties");
  int64_t size = 0;
  PTXB_CUDNN_CALL(cudnnBackendGetAttribute(props.get(), CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0,
                                           &size, nullptr));
  std::string json(static_cast<std::size_t>(std::max<int64_t>(size, 0)), '\0');
  PTXB_CUDNN_CALL(cudnnBackendGetAttribute(props.get(), CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                           size, &size, json.data()));
  json.resize(std::char_traits<char>::length(json.c_str()));
  return json;
}
#else
descriptor device_properties_from_json(const std::string&) {
  throw cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, "device properties need cuDNN >= 9.8 headers");
}
std::string device_properties_json(cudnnHandle_t, int) {
  throw cudnn_error(CUDNN_STATUS_NOT_SUPPORTED, "device properties need cuDNN >= 9.8 headers");
}
#endif

descriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace) {
  descriptor pack = descriptor::create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "VARIANT_PACK");
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data(),
           "VARIANT_PACK_UNIQUE_IDS");
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
           pointers.data(), "VARIANT_PACK_DATA_POINTERS");
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "VARIANT_PACK_WORKSPACE");
  pack.finalize("variant pack");
  return pack;
}

void execute(cudnnHandle_t handle, const descriptor& plan, const descriptor& variant_pack) {
  PTXB_CUDNN_CALL(cudnnBackendExecute(handle, plan.get(), variant_pack.get()));
}

float median_execution_ms(cudnnHandle_t handle, const descriptor& plan, const descriptor& variant_pack,
                          cudaStream_t stream, int iterations) {
  execute(handle, plan, variant_pack);
  std::vector<cudaEvent_t> events(static_cast<std::size_t>(2 * iterations), nullptr);
  for (cudaEvent_t& e : events) PTXB_CUDA_CALL(cudaEventCreate(&e));
  std::vector<float> times_ms;
  try {
    for (int i = 0; i < iterations; ++i) {
      PTXB_CUDA_CALL(cudaEventRecord(events[2 * i], stream));
      execute(handle, plan, variant_pack);
      PTXB_CUDA_CALL(cudaEventRecord(events[2 * i + 1], stream));
    }
    PTXB_CUDA_CALL(cudaStreamSynchronize(stream));
    for (int i = 0; i < iterations; ++i) {
      float ms = 0.0F;
      PTXB_CUDA_CALL(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
      times_ms.push_back(ms);
    }
  } catch (...) {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    throw;
  }
  for (cudaEvent_t e : events) cudaEventDestroy(e);
  std::sort(times_ms.begin(), times_ms.end());
  return times_ms[times_ms.size() / 2];
}

}  // namespace ptxbench::gpu::cudnn
