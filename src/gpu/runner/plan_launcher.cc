#include "gpu/runner/plan_launcher.h"

#include <cuda.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "core/align.h"
#include "core/file_io.h"
#include "gpu/common/launch_plan.h"

namespace ptxbench::gpu {
namespace {

struct loaded_kernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
};

// One kernel step's parameters, laid out when the plan is loaded: the scalars' bytes as the plan
// gives them and an 8-byte slot per tensor pointer, patched on each call; `pointers` (what
// cuLaunchKernelEx takes) point into `bytes`. Laid out once so that a call allocates nothing
// between its launches: host time there is inside the timed span.
struct step_params {
  std::vector<uint8_t> bytes;
  std::vector<std::size_t> offsets;  // per parameter, into bytes
  std::vector<void*> pointers;
};

launch_plan g_plan;
std::vector<loaded_kernel> g_kernels;
std::vector<step_params> g_params;  // per step; empty for a memset
std::string g_error;  // the last call's message, alive until the next call

step_params lay_out(const plan_step& s) {
  step_params out;
  std::size_t end = 0;
  for (const plan_param& a : s.params) {
    const std::size_t at = align_up<std::size_t>(end, 8);
    out.offsets.push_back(at);
    end = at + (a.k == plan_param::kind::tensor ? sizeof(uint64_t) : a.bytes.size());
  }
  out.bytes.assign(end, 0);
  for (std::size_t p = 0; p < s.params.size(); ++p) {
    const plan_param& a = s.params[p];
    if (a.k != plan_param::kind::tensor) std::copy(a.bytes.begin(), a.bytes.end(), out.bytes.begin() + out.offsets[p]);
    out.pointers.push_back(out.bytes.data() + out.offsets[p]);
  }
  return out;
}

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
  g_params.clear();
  for (const auto& s : g_plan.steps) g_params.push_back(s.k == plan_step::kind::memset ? step_params{} : lay_out(s));
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
    step_params& params = g_params[i];
    for (std::size_t p = 0; p < s.params.size(); ++p) {
      const plan_param& a = s.params[p];
      if (a.k != plan_param::kind::tensor) continue;
      uint64_t ptr = reinterpret_cast<uint64_t>(args[a.tensor].data) + static_cast<uint64_t>(a.offset);
      std::memcpy(params.bytes.data() + params.offsets[p], &ptr, sizeof ptr);
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
    if (CUresult r = cuLaunchKernelEx(&config, g_kernels[s.kernel].function, params.pointers.data(), nullptr); r != CUDA_SUCCESS)
      return fail(PTXBENCH_ERROR_EXCEPTION, driver_error(r, fmt::format("step {}: launching {}", i, k.name)));
  }
  return PTXBENCH_OK;
}

}  // namespace ptxbench::gpu
