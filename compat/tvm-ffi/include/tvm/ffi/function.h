// PTXBench TVM-FFI compatibility: TVM_FFI_DLL_EXPORT_TYPED_FUNC(name, fn).
//
// Under TVM-FFI the macro exports `__tvm_ffi_<name>`, a packed function over TVM-FFI's Any values.
// Here it exports PTXBench's kernel entry point instead, the same two symbols PTXBENCH_EXPORT(name, ...)
// would: `ptxbench_abi_version_<name>`, `ptxbench_entry_<name>` and `ptxbench_signature_<name>` (tvm/ffi/ptxbench/entry_bridge.h
// explains the conversion). It may be used inside a namespace and with a qualified function name, as
// upstream kernels do (`TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, gemm_cuda::run);`). The function must
// return void and take tvm::ffi::TensorView and plain scalar parameters. tvm::ffi::Function, Any and
// the global function registry are not provided.
#ifndef TVM_FFI_FUNCTION_H_
#define TVM_FFI_FUNCTION_H_

#include <tvm/ffi/ptxbench/entry_bridge.h>

#include <type_traits>

#define TVM_FFI_DLL_EXPORT_TYPED_FUNC(ExportName, Function)                                                 \
  extern "C" __attribute__((visibility("default"), used)) const ptxbench_signature                         \
      ptxbench_signature_##ExportName = ::tvm::ffi::ptxbench_bridge::signature<&Function>();                \
  extern "C" __attribute__((visibility("default"))) int32_t ptxbench_abi_version_##ExportName() {          \
    return PTXBENCH_ABI_VERSION;                                                                            \
  }                                                                                                         \
  extern "C" __attribute__((visibility("default"))) int32_t ptxbench_entry_##ExportName(                   \
      const ptxbench_tensor* args, int32_t nargs, cudaStream_t stream, const char** message) {              \
    static_assert(std::is_same_v<decltype(&ptxbench_entry_##ExportName), ptxbench_entry_fn>,                \
                  "PTXBench's TVM-FFI bridge no longer matches ptxbench_entry_fn; update tvm/ffi/function.h"); \
    return ::tvm::ffi::ptxbench_bridge::entry<&Function>(args, nargs, stream, ptxbench_signature_##ExportName, \
                                                        #ExportName, message);                              \
  }

// Documentation strings are for TVM-FFI's stub generators; PTXBench has no use for them.
#define TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(ExportName, DocString)

#endif  // TVM_FFI_FUNCTION_H_
