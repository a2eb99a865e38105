// PTXBench TVM-FFI compatibility: the umbrella header upstream PTXBench's kernels include. Everything
// the compatibility layer provides (docs/kernel-abi.md, "Upstream (TVM-FFI) kernels").
#ifndef TVM_FFI_TVM_FFI_H_
#define TVM_FFI_TVM_FFI_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#endif  // TVM_FFI_TVM_FFI_H_
