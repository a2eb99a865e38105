#include "agent/prompt.h"

#include <fmt/format.h>

#include "suite/task_view.h"

namespace ptxbench::agent {
namespace {

constexpr const char* k_system = R"(You are an expert CUDA kernel developer. Your task is to write a fast, correct CUDA kernel for the {gpu} ({arch}) that uses this GPU generation's own instructions.

## Response format

In each response, give your complete kernel source in a single ```cuda code block (one self-contained .cu file). After each response you receive evaluation feedback: compiler errors, correctness results, speed against the vendor library, and which of the required instructions actually executed. Use it to improve your kernel.

## Kernel ABI (include <ptxbench/abi.h>)

- Write a host function `void run(ptxbench::tensor_view ..., cudaStream_t stream)` that takes every input and then every output of the task, in the task's order, followed by the stream, and export it with `PTXBENCH_EXPORT(run, <dtype of each tensor>)`, for example `PTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)`. Dtype constants: PTXBENCH_FLOAT32, PTXBENCH_FLOAT16, PTXBENCH_BFLOAT16, PTXBENCH_FLOAT8_E4M3FN, PTXBENCH_FLOAT8_E5M2, PTXBENCH_INT64, PTXBENCH_INT32, PTXBENCH_INT8, PTXBENCH_BOOL.
- A tensor_view gives `data<T>()`, `size(dim)`, `stride(dim)`, `numel()`, `ndim()`, `dtype()`; scalars have ndim() == 0 and their value is `scalar<T>()` (on the host).
- Every tensor is a contiguous row-major device pointer on the current device, 256-byte aligned.
- Launch your kernels on `stream`; all work must be finished or ordered on it when run() returns.
- Write every element of every output (outputs start filled with NaN). Never write inputs.
- Throw `ptxbench::abi_error("...")` from run() to report a problem; it becomes a runtime error with your message.
- Implement everything yourself: vendor libraries (cuBLAS, cuBLASLt, cuDNN) and dynamic loading are rejected before compiling.
- Your file is compiled by nvcc for {gencode} and linked against the CUDA runtime and driver only. You may use inline PTX and the driver API (e.g. cuTensorMapEncodeTiled for TMA descriptors).

## Target

You are targeting {gpu} ({arch_family}, {arch}). A kernel counts as target-correct only if it is correct AND one of these instruction families actually executes on the evaluated workload: {families}.
)";

constexpr const char* k_user = R"(Write a CUDA kernel and its host `run` function that implement the reference below for the given workload, as fast as you can.

Task:
{task}

End your reply with a single ```cuda code block that holds the complete source: the kernels and `run`, exported with PTXBENCH_EXPORT.
)";

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : (i + 1 == items.size() ? " or " : ", ")) + items[i];
  return s;
}

}  // namespace

result<prompt_pair> builtin_prompt(const task& t, const target_info& target, const std::string& variant) {
  if (variant != k_builtin_variant)
    return make_error(fmt::format(
        "prompt variant '{}' is not available: this build has only the built-in prompt (variant '{}'); the "
        "knowledge-pack prompt builder provides the others",
        variant, k_builtin_variant));
  prompt_pair p;
  p.system = fmt::format(k_system, fmt::arg("gpu", target.gpu_name), fmt::arg("arch", target.arch),
                         fmt::arg("gencode", target.gencode), fmt::arg("arch_family", target.arch_family),
                         fmt::arg("families", join(target.required_families)));
  p.user = fmt::format(k_user, fmt::arg("task", dump_pretty(task_view_json(t))));
  return p;
}

}  // namespace ptxbench::agent
