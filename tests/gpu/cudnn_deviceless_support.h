#pragma once
// What the device-less cuDNN tests share: the toolkit's stub libcuda (so cuDNN's runtime compiler
// finds a "driver" in a process without a GPU), the hand-composed H200 device properties, and the
// engines whose mode-A configs compile for a graph on that device.

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "baselines/cudnn_plan.h"

namespace ptxbench::gpu::cudnn::deviceless {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Loads the toolkit's stub libcuda under its soname; only sensible in a process with no real GPU.
inline bool load_stub_libcuda(std::string& why) {
  const std::filesystem::path stub = std::filesystem::path(PTXBENCH_TEST_CUDA_ROOT) / "lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) {
    why = "no stub libcuda at " + stub.string();
    return false;
  }
  if (dlopen(stub.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    why = std::string("cannot load the stub libcuda: ") + dlerror();
    return false;
  }
  return true;
}

/// cuDNN's device properties of an H200 (tests/fixtures/cudnn, composed by hand; see its README).
inline descriptor h200_device_properties() {
  return device_properties_from_json(
      read_text(std::filesystem::path(PTXBENCH_TEST_FIXTURES) / "cudnn/h200_device_properties.json"));
}

/// The engines (by global index) whose mode-A configs for `op_graph` on `device` compile: finalizing
/// the plan succeeds or stops only at loading the module, the first step that needs a real driver.
/// `statuses` records every config's outcome.
inline std::set<int64_t> compiling_engines(const descriptor& op_graph, const descriptor& device, std::string& statuses) {
  std::set<int64_t> engines;
  std::vector<descriptor> configs = engine_configs(op_graph, CUDNN_HEUR_MODE_A, &device);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    plan_candidate plan;
    const cudnnStatus_t status = finalize_plan(configs[i], "A", plan);
    statuses += " [engine " + std::to_string(plan.engine_id) + ": " + cudnnGetErrorString(status) + "]";
    if (status == CUDNN_STATUS_SUCCESS || status == CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER) {
      engines.insert(plan.engine_id);
    }
  }
  if (configs.empty()) statuses += " [no mode-A engine configs]";
  return engines;
}

}  // namespace ptxbench::gpu::cudnn::deviceless
