#pragma once
// The static SASS check: does the built code contain an instruction of a required family? It can
// only say "present"; whether the instruction runs on the evaluated workload is the dynamic check's
// job (a wgmma in a never-taken branch is present here, see docs/sass-and-profiling.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sass/opcode_family.h"
#include "sass/sass_parser.h"

namespace ptxbench::sass {

struct static_check_options {
  std::vector<std::string> required_families;  ///< any one present suffices ({"GMMA","TMA"} on h200)
  std::string arch;                             ///< "sm_90a": only functions of this arch (or of unknown arch) count; empty: all
};

/// Counts for one function (kernels and non-inlined device functions alike).
struct kernel_static_counts {
  std::string name;       ///< mangled
  std::string demangled;  ///< best effort; equal to name when it cannot be demangled
  std::string arch;
  sass_format format = sass_format::cuobjdump;
  int64_t instructions = 0;
  family_counts families;  ///< only families with at least one instruction
};

struct static_check_result {
  std::vector<kernel_static_counts> kernels;
  family_counts total;                       ///< over all counted kernels; required families always present (maybe 0)
  std::vector<std::string> required_families;
  std::vector<std::string> present_required;  ///< required families with a count > 0
  bool required_present = false;
  int skipped_other_arch = 0;                 ///< functions left out because their arch differs
  std::string reason;                         ///< one line for a person
};

/// Counts families per function and checks whether a required family is present. When the same
/// function (name and arch) was printed by both tools, only the cuobjdump view is counted, so a
/// combined listing is not counted twice. Fails when a required family is not in the family table
/// or the list of required families is empty.
result<static_check_result> static_check(const std::vector<sass_function>& functions,
                                         const static_check_options& options);

/// Demangles an Itanium C++ name ("_Z11wgmma_probePf" -> "wgmma_probe(float*)"); returns the input
/// unchanged when it is not a mangled name.
std::string demangle(const std::string& mangled);

/// The qualified function name without return type and parameter list, for matching names printed
/// by different tools: "void ns::gemm<128>(float const*)" and "ns::gemm<128>(const float *)" both
/// give "ns::gemm<128>"; an anonymous namespace is "<unnamed>" whichever way the tool spelled it
/// ("(anonymous namespace)" or "<unnamed>"). Best effort: template arguments must be spelled the same way.
std::string kernel_base_name(std::string_view demangled);

/// True when a mangled SASS function name and a name printed by Nsight Compute or
/// compute-sanitizer ("wgmma_probe(float *)", or mangled) name the same kernel, by kernel_base_name.
bool same_kernel(const std::string& mangled, std::string_view printed);

}  // namespace ptxbench::sass
