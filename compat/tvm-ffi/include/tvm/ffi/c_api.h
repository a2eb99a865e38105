// PTXBench TVM-FFI compatibility: the base macros of TVM-FFI's C API header that kernels meet, and
// the DLPack types. The real header's object system, Any values and function registry are not
// provided (docs/kernel-abi.md, "Upstream (TVM-FFI) kernels", lists what is).
#ifndef TVM_FFI_C_API_H_
#define TVM_FFI_C_API_H_

#include <dlpack/dlpack.h>

#ifndef __cplusplus
#error "PTXBench's TVM-FFI compatibility headers are C++ only (kernels are CUDA C++)"
#endif

#define TVM_FFI_DLL
#define TVM_FFI_DLL_EXPORT __attribute__((visibility("default")))
#define TVM_FFI_INLINE inline __attribute__((always_inline))
#define TVM_FFI_NO_INLINE __attribute__((noinline))
#define TVM_FFI_PREDICT_TRUE(x) __builtin_expect(!!(x), 1)
#define TVM_FFI_PREDICT_FALSE(x) __builtin_expect(!!(x), 0)

#endif  // TVM_FFI_C_API_H_
