#include "suite/binding.h"

#include <fmt/format.h>

namespace ptxbench {

std::string_view binding_name(kernel_binding b) {
  return b == kernel_binding::tvm_ffi ? "tvm-ffi" : "ptxbench";
}

result<kernel_binding> binding_of(const solution& s) {
  if (!s.spec.binding || *s.spec.binding == "ptxbench") return kernel_binding::ptxbench;
  if (*s.spec.binding == "tvm-ffi") return kernel_binding::tvm_ffi;
  return make_error(fmt::format("binding \"{}\" is not supported (expected \"ptxbench\" or \"tvm-ffi\")",
                                *s.spec.binding));
}

}  // namespace ptxbench
