#include "build/binding_includes.h"

namespace ptxbench::build {

std::filesystem::path tvm_ffi_compat_include_dir(const std::filesystem::path& root) {
  return root / "compat" / "tvm-ffi" / "include";
}

std::vector<std::filesystem::path> binding_include_dirs(kernel_binding b, const std::filesystem::path& root) {
  if (b == kernel_binding::tvm_ffi) return {tvm_ffi_compat_include_dir(root)};
  return {};
}

}  // namespace ptxbench::build
