#pragma once
// Names of the measurement machinery a candidate must not touch. The candidate's host code runs in
// the same process as the runner's CUPTI timing, so a call into CUPTI (turn activity records off
// around the real work and on for a decoy kernel), into the CUDA profiler API or NVTX, into the
// runner's own code, or a walk over the loaded ELF images to find any of them, would let it choose
// what is measured. The source gate (source_gate.h) and the link gate (link_gate.h) reject these
// names wherever the code or the built object shows them; the runner's own checks catch what no
// name reveals (docs/gpu-evaluation.md, "Known limits").
//
// Policy for comments and strings follows the source gate: words in comments and string literals
// are ignored, with two exceptions that only a lookup by name or a path can need — a string literal
// that is exactly one of the banned function names (what cuGetProcAddress, dlsym or an asm label
// would take), and a path into /proc's memory maps or image files.

#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::build {

/// Why an identifier of the candidate's code names measurement machinery ("CUPTI", "the CUDA
/// profiler API", "NVTX", "the runner's own code", "walking the loaded ELF images"), or nullopt.
std::optional<std::string> measurement_identifier(std::string_view identifier);

/// The same for a header named in #include (<cupti.h>, <cuda_profiler_api.h>, <nvtx3/...>, <link.h>).
std::optional<std::string> measurement_header(std::string_view header);

/// The same for an undefined dynamic symbol of the built object (mangled C++ names included:
/// anything in namespace ptxbench that the object does not define is the runner's code).
std::optional<std::string> measurement_symbol(std::string_view symbol);

/// The same for the contents of a string literal: exactly a banned function name, or a /proc path
/// to a process's maps, mem, auxv or executable.
std::optional<std::string> measurement_string(std::string_view literal);

}  // namespace ptxbench::build
