#pragma once
// Which kernel ABI a Solution's sources are written against (spec.binding). PTXBench's own ABI
// (include/ptxbench/abi.h, PTXBENCH_EXPORT) is the default; upstream PTXBench's kernels use TVM-FFI
// (TVM_FFI_DLL_EXPORT_TYPED_FUNC, tvm::ffi::TensorView) and build unchanged against the compatibility
// headers in compat/tvm-ffi/include (docs/kernel-abi.md, "Upstream (TVM-FFI) kernels").

#include <string_view>

#include "core/result.h"
#include "suite/solution.h"

namespace ptxbench {

enum class kernel_binding { ptxbench, tvm_ffi };

/// "ptxbench" or "tvm-ffi", as spec.binding spells it.
std::string_view binding_name(kernel_binding b);

/// The binding a Solution asks for: no binding or "ptxbench" is PTXBench's ABI, "tvm-ffi" is
/// upstream's. Anything else (upstream's "torch" extension binding included) is an error that names
/// the supported ones. Upstream treats a missing binding as "tvm-ffi"; here it stays PTXBench's ABI,
/// so an upstream Solution must say "binding": "tvm-ffi" (upstream's own tooling always writes it).
result<kernel_binding> binding_of(const solution& s);

}  // namespace ptxbench
