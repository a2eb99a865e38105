#include <link.h>

#include <fmt/format.h>

#include <set>
#include <string>

#include "tools/attention_probe.h"
#include "baselines/cudnn_backend.h"
#include "baselines/cudnn_plan.h"

namespace ptxbench::gpu::probe {
namespace {
constexpr double k_report_tolerance = 1e-2;  // the tasks' atol and rtol, as attention_probe_cases.cc checks
}  // namespace

nlohmann::ordered_json to_json(const record& r) {
  nlohmann::ordered_json j{{"what", r.what},
                           {"workload", r.workload},
                           {"shape", {{"B", r.dims.b}, {"H", r.dims.h}, {"S", r.dims.s}, {"D", r.dims.d}}},
                           {"causal", r.causal},
                           {"required", r.required},
                           {"built", r.built}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.description.empty()) j["description"] = r.description;
  if (!r.plans.empty()) j["plans"] = r.plans;
  if (!r.inputs_note.empty()) j["backward_inputs"] = r.inputs_note;
  if (r.check) {
    j["numerics"] = {{"scope", r.check->scope},         {"checked_elements", r.check->checked},
                     {"mismatches", r.check->mismatches}, {"max_abs_error", r.check->max_abs_error},
                     {"atol", k_report_tolerance},        {"rtol", k_report_tolerance},
                     {"pass", r.check->pass()}};
  }
  if (r.median_ms) j["median_ms"] = *r.median_ms;
  return j;
}

nlohmann::ordered_json environment_facts() {
  std::set<std::string> libraries;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        // cuDNN and what its engines load at run time (NVRTC for runtime-compiled kernels, cuBLASLt).
        for (const char* lib : {"cudnn", "nvrtc", "cublas", "cudart", "libcuda."}) {
          if (name.find(lib) != std::string::npos) static_cast<std::set<std::string>*>(data)->insert(name);
        }
        return 0;
      },
      &libraries);
  int runtime = 0, driver = 0, device = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceProp prop{};
  const bool have_device = cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess;
  cudaGetLastError();
  nlohmann::ordered_json j{{"cudnn_runtime_version", cudnn::runtime_version().str()},
                           {"cudnn_header_version", cudnn::compiled_version().str()},
                           {"libraries_loaded", std::vector<std::string>(libraries.begin(), libraries.end())},
                           {"cuda_runtime_version", runtime},
                           {"cuda_driver_version", driver}};
  if (have_device) {
    j["gpu"] = {{"name", prop.name},
                {"sm", fmt::format("{}{}", prop.major, prop.minor)},
                {"multiprocessors", prop.multiProcessorCount},
                {"memory_bytes", prop.totalGlobalMem}};
    // cuDNN's own JSON of this GPU: the fixture for device-less engine checks on CPU machines
    // (tests/fixtures/cudnn/h200_device_properties.json).
    try {
      cudnn::handle h;
      j["cudnn_device_properties_json"] = cudnn::device_properties_json(h.get(), device);
    } catch (const std::exception& e) {
      j["cudnn_device_properties_json"] = std::string("unavailable: ") + e.what();
    }
  } else {
    j["gpu"] = nullptr;
  }
  return j;
}

}  // namespace ptxbench::gpu::probe
