#pragma once
// The link gate: after the build, inspect the shared object itself. Whatever trick put a vendor
// library into it (a pragma, a hand-written declaration, token pasting, a weak symbol), it shows up
// as a DT_NEEDED entry or an undefined dynamic symbol, and is rejected here.

#include <filesystem>
#include <vector>

#include "build/elf_reader.h"
#include "core/result.h"
#include "verdict/verdict.h"

namespace ptxbench::build {

/// Checks what the object links against. DT_NEEDED may only name the CUDA runtime and driver and
/// the C/C++ runtime; no undefined symbol may belong to cuBLAS/cuBLASLt/cuDNN (weak ones included)
/// or be a dynamic-loading or process-spawning function. Returns the findings (empty: passed).
std::vector<gate_finding> check_linkage(const elf_dynamic_info& info, const std::string& object_name);

/// Reads the object and checks it; an unreadable or non-ELF object is an error (infrastructure).
result<std::vector<gate_finding>> check_linkage_of(const std::filesystem::path& shared_object);

}  // namespace ptxbench::build
