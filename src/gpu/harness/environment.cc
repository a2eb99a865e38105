#include "gpu/harness/environment.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cupti.h>

#include <sstream>

#include <fmt/format.h>

#include "core/process.h"

#ifdef PTXBENCH_HAVE_CUDNN_SDPA
extern "C" size_t cudnnGetVersion(void);
#endif

namespace ptxbench::gpu {
namespace {

std::vector<std::string> smi_fields(int device, const std::string& query) {
  // By UUID: nvidia-smi numbers GPUs in PCI order, CUDA (and CUDA_VISIBLE_DEVICES) may not.
  std::string which = device_uuid(device);
  if (which.empty()) which = std::to_string(device);
  auto r = run_process({.argv = {"nvidia-smi", "--query-gpu=" + query, "--format=csv,noheader,nounits", "-i", which},
                        .timeout_s = 15});
  std::vector<std::string> out;
  if (!r.succeeded()) return out;
  std::stringstream ss(r.out);
  std::string field;
  while (std::getline(ss, field, ',')) {
    auto a = field.find_first_not_of(" \n"), b = field.find_last_not_of(" \n");
    out.push_back(a == std::string::npos ? "" : field.substr(a, b - a + 1));
  }
  return out;
}

std::string version3(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace

std::string device_uuid(int device) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "";
  }
  const auto* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

ordered_json read_clocks(int device) {
  auto f = smi_fields(device, "clocks.sm,clocks.max.sm,power.draw,temperature.gpu");
  if (f.size() < 4) return ordered_json::object();
  auto num = [](const std::string& s) -> ordered_json {
    try {
      return std::stod(s);
    } catch (...) {
      return s;
    }
  };
  return {{"sm_mhz", num(f[0])}, {"max_sm_mhz", num(f[1])}, {"power_w", num(f[2])}, {"temperature_c", num(f[3])}};
}

ordered_json collect_environment(int device) {
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, device);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  uint32_t cupti = 0;
  cuptiGetVersion(&cupti);
  auto smi = smi_fields(device, "driver_version,name,power.limit");
  ordered_json libs = {{"cuda_driver_api", version3(driver)},
                       {"cuda_runtime", version3(runtime)},
                       {"cublasLt", std::to_string(cublasLtGetVersion())},
                       {"cupti_api", std::to_string(cupti)}};
#ifdef PTXBENCH_HAVE_CUDNN_SDPA
  libs["cudnn"] = std::to_string(cudnnGetVersion());
#endif
  if (!smi.empty()) libs["nvidia_driver"] = smi[0];
  return {{"gpu", p.name},
          {"device", device},
          {"uuid", device_uuid(device)},
          {"compute_capability", fmt::format("{}.{}", p.major, p.minor)},
          {"sms", p.multiProcessorCount},
          {"l2_bytes", p.l2CacheSize},
          {"memory_bytes", p.totalGlobalMem},
          {"power_limit_w", smi.size() > 2 ? smi[2] : ""},
          {"libs", libs},
          {"clocks", read_clocks(device)}};
}

}  // namespace ptxbench::gpu
