#pragma once
// The include folders a Solution's binding adds to the build. A TVM-FFI (upstream) kernel gets
// PTXBench's own TVM-FFI compatibility headers, never a real libtvm_ffi: the headers turn
// TVM_FFI_DLL_EXPORT_TYPED_FUNC into PTXBench's entry point, so nothing needs linking.

#include <filesystem>
#include <vector>

#include "suite/binding.h"

namespace ptxbench::build {

/// Where the compatibility headers live under the PTXBench root (they include <ptxbench/abi.h>,
/// so root/include must be on the include path too; the build always passes it).
std::filesystem::path tvm_ffi_compat_include_dir(const std::filesystem::path& root);

/// The extra include folders for a binding: none for PTXBench's ABI, the compat folder for TVM-FFI.
std::vector<std::filesystem::path> binding_include_dirs(kernel_binding b, const std::filesystem::path& root);

}  // namespace ptxbench::build
