#include "gpu/runner/plan_launcher.h"

#include <cuda.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "core/file_io.h"
#include "gpu/common/launch_plan.h"

namespace ptxbench::gpu {
namespace {

struct loaded_kernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

launch_plan g_plan;
std::vector<loaded_kernel> g_kernels;
std::string g_error;  // the last call's message, alive until the next call

std::string driver_error(CUresult r, const std::string& what) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return fmt::format("{} failed: {}: {}", what, name ? name : "?", text ? text : "?");
}

}  // namespace

status load_plan(const std::string& plan_file) {
  auto text = read_text_file(plan_file, 16u << 20);
  if (!text) return text.err();
  auto doc = parse_json(*text, plan_file);
  if (!doc) return doc.err();
  auto plan = launch_plan_from_json(*doc);
  if (!plan) return plan.err();
  const auto dir = std::filesystem::path(plan_file).parent_path();
  for (const auto& k : plan->kernels) {
    auto path = k.cubin.is_absolute() ? k.cubin : dir / k.cubin;
    auto image = read_file(path, 64u << 20);
    if (!image) return image.err();
    loaded_kernel lk;
    if (CUresult r = cuModuleLoadData(&lk.module, image->data()); r != CUDA_SUCCESS)
      return make_error(driver_error(r, "loading the cubin of " + k.name));
    if (CUresult r = cuModuleGetFunction(&lk.function, lk.module, k.name.c_str()); r != CUDA_SUCCESS)
      return make_error(driver_error(r, "finding kernel " + k.name + " in its cubin"));
    if (k.shared_bytes > 48 * 1024)
      if (CUresult r = cuFuncSetAttribute(lk.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          static_cast<int>(k.shared_bytes));
          r != CUDA_SUCCESS)
        return make_error(driver_error(r, fmt::format("allowing {} bytes of shared memory for {}", k.shared_bytes, k.name)));
    g_kernels.push_back(lk);
  }
  g_plan = std::move(*plan);
  return ok();
}

int32_t plan_entry(const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const char** message) {
  auto fail = [&](int32_t kind, std::string why) {
    g_error = std::move(why);
    *message = g_error.c_str();
    return kind;
  };
  if (nargs != g_plan.tensors)
    return fail(PTXBENCH_ERROR_ARGUMENT_COUNT, fmt::format("the plan takes {} tensors, the call passed {}", g_plan.tensors, nargs));
  auto hstream = reinterpret_cast<CUstream>(stream);
  std::vector<std::vector<uint8_t>> values;
  std::vector<void*> pointers;
  for (std::size_t i = 0; i < g_plan.steps.size(); ++i) {
    const plan_step& s = g_plan.steps[i];
    if (s.k == plan_step::kind::memset) {
      auto base = reinterpret_cast<CUdeviceptr>(args[s.tensor].data) + static_cast<CUdeviceptr>(s.offset);
      CUresult r = s.element_size == 1 ? cuMemsetD8Async(base, static_cast<unsigned char>(s.value), s.count, hstream)
                   : s.element_size == 2 ? cuMemsetD16Async(base, static_cast<unsigned short>(s.value), s.count, hstream)
                                         : cuMemsetD32Async(base, s.value, s.count, hstream);
      if (r != CUDA_SUCCESS) return fail(PTXBENCH_ERROR_EXCEPTION, driver_error(r, fmt::format("step {} (a memset)", i)));
      continue;
    }
    const plan_kernel& k = g_plan.kernels[s.kernel];
    values.assign(s.params.size(), {});
    pointers.assign(s.params.size(), nullptr);
    for (std::size_t p = 0; p < s.params.size(); ++p) {
      const plan_param& a = s.params[p];
      if (a.k == plan_param::kind::tensor) {
        uint64_t ptr = reinterpret_cast<uint64_t>(args[a.tensor].data) + static_cast<uint64_t>(a.offset);
        values[p].resize(8);
        std::memcpy(values[p].data(), &ptr, 8);
      } else {
        values[p] = a.bytes;
      }
      pointers[p] = values[p].data();
    }
    CUlaunchAttribute attrs[2];
    unsigned n_attrs = 0;
    if (k.cluster[0] * k.cluster[1] * k.cluster[2] > 1) {
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[n_attrs].value.clusterDim.x = k.cluster[0];
      attrs[n_attrs].value.clusterDim.y = k.cluster[1];
      attrs[n_attrs].value.clusterDim.z = k.cluster[2];
      ++n_attrs;
    }
    if (k.cooperative) {
      attrs[n_attrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
      attrs[n_attrs].value.cooperative = 1;
      ++n_attrs;
    }
    CUlaunchConfig config{};
    config.gridDimX = s.grid[0];
    config.gridDimY = s.grid[1];
    config.gridDimZ = s.grid[2];
    config.blockDimX = k.block[0];
    config.blockDimY = k.block[1];
    config.blockDimZ = k.block[2];
    config.sharedMemBytes = k.shared_bytes;
    config.hStream = hstream;
    config.attrs = n_attrs ? attrs : nullptr;
    config.numAttrs = n_attrs;
    if (CUresult r = cuLaunchKernelEx(&config, g_kernels[s.kernel].function, pointers.data(), nullptr); r != CUDA_SUCCESS)
      return fail(PTXBENCH_ERROR_EXCEPTION, driver_error(r, fmt::format("step {}: launching {}", i, k.name)));
  }
  return PTXBENCH_OK;
}

}  // namespace ptxbench::gpu
